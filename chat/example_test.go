package chat_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/signoff-dev/signoff/chat"
)

func ExampleParseCommandText() {
	option, caseID, prefix, reason, err := chat.ParseCommandText("reject case_01jb2k3m4n5p6q7r8s9t0v1w2x 3F1C9A0B7D2E  cannot reproduce")
	fmt.Println(option, caseID, prefix, reason, err)

	_, _, _, _, err = chat.ParseCommandText("approve case_01jb2k3m4n5p6q7r8s9t0v1w2x 3f1c")
	fmt.Println(err)
	// Output:
	// reject case_01jb2k3m4n5p6q7r8s9t0v1w2x 3f1c9a0b7d2e cannot reproduce <nil>
	// signoff error: code=invalid message=digest prefix has 4 hex digits: quote at least 12
}

func ExampleVerifySlack() {
	// A Slack request is trusted only after its signature and timestamp
	// check out; only then is its body parsed.
	secret := "8f742231b10e8888abcd99yyyzzz85a5"
	sent := time.Unix(1531420618, 0)
	body := []byte("command=%2Fsignoff&text=help&user_id=U2CERLKJA&team_id=T1DC2JH3J")
	h := http.Header{}
	h.Set(chat.HeaderSlackTimestamp, "1531420618")
	h.Set(chat.HeaderSlackSignature, chat.SignSlack(secret, sent, body))

	fmt.Println(chat.VerifySlack(secret, h, body, sent.Add(time.Minute), 0))
	fmt.Println(chat.VerifySlack(secret, h, body, sent.Add(time.Hour), 0))
	// Output:
	// <nil>
	// signoff error: code=unauthorized message=chat: stale Slack request: sent at 2018-07-12T18:36:58Z, 1h0m0s before now (tolerance 5m0s)
}
