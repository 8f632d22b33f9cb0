package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// ProviderReplay is the provider name of answers played back from a
// recorded transcript. It is not a provider a role configuration may name:
// replay is a property of a run (agent worker --replay FILE), which answers
// every openai and authored role from the transcript.
const ProviderReplay = "replay"

// Transcript format: the first line is the header, then one exchange per
// line, then a trailer counting them. See docs/agents.md, "Record and
// replay".
const (
	ReplayFormat  = "signoff-replay"
	ReplayVersion = 1
	// maxReplayLine bounds one transcript line (one exchange: the whole
	// conversation so far and its answer).
	maxReplayLine = 64 << 20
)

type replayHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

type replayTrailer struct {
	End       bool `json:"end"`
	Exchanges int  `json:"exchanges"`
}

// exchange is one model call as the transcript holds it.
type exchange struct {
	// Seq numbers exchanges over the transcript, from 1.
	Seq int `json:"seq"`
	// Thread numbers the recorded tasks in order of their first exchange;
	// Call numbers a task's exchanges, from 1, across all its runs.
	Thread int `json:"thread"`
	Call   int `json:"call"`
	// Turn is the conversation turn: the assistant messages in the request
	// plus one.
	Turn int    `json:"turn"`
	Role string `json:"role"`
	Kind string `json:"kind"`
	// Task and Case are the recorded ids, for people reading the file;
	// matching never uses them.
	Task     string `json:"task,omitempty"`
	Case     string `json:"case,omitempty"`
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"`
	Evidence string `json:"evidence"`
	// RequestDigest is the runtime's prompt digest of the call (the
	// ModelCall's), to find the call in the ledger.
	RequestDigest string            `json:"request_digest"`
	Request       Request           `json:"request"`
	Response      *recordedResponse `json:"response,omitempty"`
	Error         string            `json:"error,omitempty"`
	// Timeout is set when the call's deadline ended it.
	Timeout bool `json:"timeout,omitempty"`

	norm []normField // the request's fields, normalized (computed once)
	used bool
	// run numbers the recorded runs of the task: a run starts with a
	// fresh task prompt.
	run int
}

type recordedResponse struct {
	Message      Message `json:"message"`
	Usage        Usage   `json:"usage"`
	FinishReason string  `json:"finish_reason,omitempty"`
	// UsageEstimated is set when the provider reported no usage and the
	// recorder booked the runtime's estimate instead.
	UsageEstimated bool `json:"usage_estimated,omitempty"`
}

// Recorder writes every model exchange of a run to a transcript. It is
// safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	w       io.Writer
	err     error
	seq     int
	threads map[string]*recThread
	secrets []string
	closed  bool
}

type recThread struct{ n, calls int }

// NewRecorder writes the transcript header to w at once and one JSON line
// per exchange as it happens. Close writes the trailer.
func NewRecorder(w io.Writer) *Recorder {
	r := &Recorder{w: w, threads: map[string]*recThread{}}
	r.err = r.writeLine(replayHeader{Format: ReplayFormat, Version: ReplayVersion})
	return r
}

// Redact adds values (API keys, tokens) that must never reach the
// transcript: each is replaced by [REDACTED] wherever it would appear.
// Values shorter than 8 bytes are ignored (they would clobber ordinary
// text and are no secret).
func (r *Recorder) Redact(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		if len(v) >= 8 && !contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
		}
	}
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// Err is the first error writing the transcript.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Exchanges is how many exchanges have been recorded.
func (r *Recorder) Exchanges() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Close writes the trailer, which marks the transcript complete; a
// transcript without it does not load. It does not close the writer.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.err
	}
	r.closed = true
	if r.err == nil {
		r.err = r.writeLine(replayTrailer{End: true, Exchanges: r.seq})
	}
	return r.err
}

// writeLine encodes v as one line, with every secret redacted, in one
// Write, and flushes w when it can be flushed.
func (r *Recorder) writeLine(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("record transcript: %w", err)
	}
	line := buf.Bytes()
	for _, s := range r.secrets {
		line = bytes.ReplaceAll(line, []byte(s), []byte("[REDACTED]"))
		if q, err := json.Marshal(s); err == nil {
			line = bytes.ReplaceAll(line, q[1:len(q)-1], []byte("[REDACTED]"))
		}
	}
	if _, err := r.w.Write(line); err != nil {
		return fmt.Errorf("record transcript: %w", err)
	}
	if f, ok := r.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("record transcript: %w", err)
		}
	}
	return nil
}

// Wrap returns p recording every exchange it answers. Name, Evidence and
// Unmetered are p's: recording changes nothing the runtime sees.
func (r *Recorder) Wrap(rc RoleConfig, p Provider) Provider {
	if rc.APIKeyEnv != "" {
		r.Redact(os.Getenv(rc.APIKeyEnv))
	}
	return &recording{r: r, role: rc.Name, model: rc.Model, p: p}
}

type recording struct {
	r     *Recorder
	role  string
	model string
	p     Provider
}

func (w *recording) Name() string     { return w.p.Name() }
func (w *recording) Evidence() string { return w.p.Evidence() }
func (w *recording) Unmetered() bool {
	um, ok := w.p.(Unmetered)
	return ok && um.Unmetered()
}

// bearerRE finds credentials an endpoint's error message may echo.
var bearerRE = regexp.MustCompile(`(?i)(authorization:?\s+(?:bearer\s+)?|bearer\s+)[A-Za-z0-9._~+/=-]{6,}`)

func (w *recording) Complete(ctx context.Context, req Request) (Response, error) {
	resp, callErr := w.p.Complete(ctx, req)
	ex := exchange{Turn: assistantTurns(req.Messages) + 1, Role: w.role, Kind: req.Task.Kind,
		Task: req.Task.TaskID, Case: req.Task.CaseID, Provider: w.p.Name(), Model: w.model,
		Evidence: w.p.Evidence(), Request: req}
	digest, err := canonical.Digest(req)
	if err != nil {
		return Response{}, fmt.Errorf("record transcript: %w", err)
	}
	ex.RequestDigest = digest
	if callErr != nil {
		ex.Error = bearerRE.ReplaceAllString(truncate(callErr.Error(), 2000), "${1}[REDACTED]")
		if ex.Error == "" {
			ex.Error = "error"
		}
		ex.Timeout = errors.Is(ctx.Err(), context.DeadlineExceeded)
	} else {
		rr := &recordedResponse{Message: resp.Message, Usage: resp.Usage, FinishReason: resp.FinishReason}
		if !w.Unmetered() && rr.Usage.PromptTokens == 0 && rr.Usage.CompletionTokens == 0 {
			// The runtime estimates a metered call that reports no usage;
			// book that estimate so the replay spends the same budget.
			reqJSON, _ := json.Marshal(req)
			out, _ := json.Marshal(resp.Message)
			rr.Usage = Usage{PromptTokens: EstimateTokens(reqJSON), CompletionTokens: EstimateTokens(out)}
			rr.UsageEstimated = true
		}
		ex.Response = rr
	}
	if err := w.r.record(&ex); err != nil {
		return Response{}, err
	}
	return resp, callErr
}

func (r *Recorder) record(ex *exchange) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if r.closed {
		return signoff.Errorf(signoff.ECONFLICT, "record transcript: the recorder is closed")
	}
	th := r.threads[ex.Task]
	if th == nil {
		th = &recThread{n: len(r.threads) + 1}
		r.threads[ex.Task] = th
	}
	th.calls++
	r.seq++
	ex.Seq, ex.Thread, ex.Call = r.seq, th.n, th.calls
	r.err = r.writeLine(ex)
	return r.err
}

func assistantTurns(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// Replay answers model calls from a recorded transcript. It is safe for
// concurrent use.
type Replay struct {
	mu      sync.Mutex
	threads []*replayThread
	total   int
	used    int
	// bound is the recorded thread each live task is answered from.
	bound map[string]*binding
	// pairs are the volatile tokens (ids, digests, temp paths) matched so
	// far, kept over the whole replay so that tasks of one case stay with
	// the recording of that case. byRec and byLive index them.
	pairs         []tokPair
	byRec, byLive map[string][]int
	diverged      error
}

// tokPair is a recorded token matched to a live one while answering scope.
type tokPair struct {
	rec, live string
	scope     pairScope
}

// pairScope is where a pair was matched: a live task's run (its calls
// under one task prompt, which has a fresh spotlight boundary each run)
// answered from one recorded run. Another run of the same task, live or
// recorded, has its own temp paths, commits and boundaries: it does not
// see these pairs. Other tasks see them all.
type pairScope struct {
	task    string
	liveRun int
	recRun  int
}

func (p tokPair) visible(sc pairScope) bool {
	return p.scope.task != sc.task || p.scope.liveRun == sc.liveRun && p.scope.recRun == sc.recRun
}

type replayThread struct {
	n         int
	role      string
	kind      string
	ex        []*exchange
	claimedBy string
	// runs lists each recorded run's exchanges (indexes into ex); prompts
	// numbers the runs by their task prompt; runBound marks the runs a
	// live run is answered from.
	runs     [][]int
	prompts  map[string]int
	runBound map[int]bool
}

// binding is a live task's recorded thread and its runs' places in it.
type binding struct {
	th   *replayThread
	runs map[string]*liveRun // by task prompt
}

// liveRun is one run of a live task: the recorded run it is answered
// from and the position after the last exchange answered there. Runs of
// one task may overlap (a job delivered twice): each keeps its own place.
type liveRun struct {
	id     int
	recRun int
	next   int
}

// LoadReplay reads a transcript written by a Recorder. A transcript that
// is truncated, reordered or otherwise not what a Recorder writes is an
// EINVALID error naming the line.
func LoadReplay(rd io.Reader) (*Replay, error) {
	r := &Replay{bound: map[string]*binding{}, byRec: map[string][]int{}, byLive: map[string][]int{}}
	br := bufio.NewReaderSize(rd, 64<<10)
	bad := func(line int, format string, args ...any) error {
		return signoff.Errorf(signoff.EINVALID, "replay transcript line %d: %s", line, fmt.Sprintf(format, args...))
	}
	ended := false
	for n := 1; ; n++ {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) && len(line) == 0 {
			switch {
			case n == 1:
				return nil, signoff.Errorf(signoff.EINVALID, "replay transcript is empty")
			case !ended:
				return nil, signoff.Errorf(signoff.EINVALID, "replay transcript ends after line %d without its trailer: it was cut short or its recording did not finish", n-1)
			}
			return r, nil
		}
		if errors.Is(err, io.EOF) {
			return nil, bad(n, "the last line is cut short (no line end)")
		}
		if err != nil {
			return nil, bad(n, "%v", err)
		}
		if ended {
			return nil, bad(n, "text after the trailer")
		}
		if n == 1 {
			var h replayHeader
			if err := strictJSON(line, &h); err != nil || h.Format != ReplayFormat {
				return nil, bad(n, "not a %s transcript header (want {\"format\":%q,\"version\":%d})", ReplayFormat, ReplayFormat, ReplayVersion)
			}
			if h.Version != ReplayVersion {
				return nil, bad(n, "transcript format version %d; this build reads version %d", h.Version, ReplayVersion)
			}
			continue
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(line, &keys); err != nil {
			return nil, bad(n, "not a JSON object: %v", err)
		}
		if _, ok := keys["end"]; ok {
			var t replayTrailer
			if err := strictJSON(line, &t); err != nil || !t.End {
				return nil, bad(n, "malformed trailer")
			}
			if t.Exchanges != r.total {
				return nil, bad(n, "the trailer counts %d exchanges, the transcript holds %d", t.Exchanges, r.total)
			}
			ended = true
			continue
		}
		ex := &exchange{}
		if err := strictJSON(line, ex); err != nil {
			return nil, bad(n, "exchange: %v", err)
		}
		if err := r.add(ex); err != nil {
			return nil, bad(n, "%v", err)
		}
	}
}

// readLine reads one line, without its end, up to maxReplayLine bytes. At
// the end of input it returns what it read with io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(out)+len(chunk) > maxReplayLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxReplayLine)
		}
		out = append(out, chunk...)
		switch {
		case err == nil:
			return out[:len(out)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return out, err
		}
	}
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// add checks one exchange against those before it and files it.
func (r *Replay) add(ex *exchange) error {
	switch {
	case ex.Seq != r.total+1:
		return fmt.Errorf("exchange seq %d, want %d", ex.Seq, r.total+1)
	case ex.Thread < 1 || ex.Thread > len(r.threads)+1:
		return fmt.Errorf("thread %d out of order (%d threads so far)", ex.Thread, len(r.threads))
	case !nameRE.MatchString(ex.Role):
		return fmt.Errorf("role %q is not a role name", ex.Role)
	case ex.Kind == "" || len(ex.Kind) > 200:
		return fmt.Errorf("task kind is missing")
	case len(ex.Request.Messages) == 0:
		return fmt.Errorf("the request has no messages")
	case ex.Turn != assistantTurns(ex.Request.Messages)+1:
		return fmt.Errorf("turn %d does not match the request (%d assistant messages)", ex.Turn, assistantTurns(ex.Request.Messages))
	case (ex.Response == nil) == (ex.Error == ""):
		return fmt.Errorf("an exchange holds exactly one of response and error")
	case ex.Timeout && ex.Error == "":
		return fmt.Errorf("a timeout is an error")
	case ex.Evidence != signoff.EvidenceLive && ex.Evidence != signoff.EvidenceReplayed && ex.Evidence != signoff.EvidenceAuthored:
		return fmt.Errorf("evidence %q cannot be replayed", ex.Evidence)
	}
	if ex.Thread == len(r.threads)+1 {
		r.threads = append(r.threads, &replayThread{n: ex.Thread, role: ex.Role, kind: ex.Kind})
	}
	th := r.threads[ex.Thread-1]
	switch {
	case ex.Call != len(th.ex)+1:
		return fmt.Errorf("thread %d call %d, want call %d", ex.Thread, ex.Call, len(th.ex)+1)
	case ex.Role != th.role || ex.Kind != th.kind:
		return fmt.Errorf("thread %d is role %s, kind %s; this exchange says role %s, kind %s", ex.Thread, th.role, th.kind, ex.Role, ex.Kind)
	}
	if th.prompts == nil {
		th.prompts, th.runBound = map[string]int{}, map[int]bool{}
	}
	tp := taskPrompt(ex.Request.Messages)
	ex.run = th.prompts[tp]
	if ex.run == 0 {
		th.runs = append(th.runs, nil)
		ex.run = len(th.runs)
		th.prompts[tp] = ex.run
	}
	th.runs[ex.run-1] = append(th.runs[ex.run-1], len(th.ex))
	th.ex = append(th.ex, ex)
	r.total++
	return nil
}

// taskPrompt is the message that opens a run: the task as the runtime
// renders it, with a fresh spotlight boundary each run.
func taskPrompt(msgs []Message) string {
	if len(msgs) < 2 {
		return ""
	}
	return msgs[1].Content
}

// Exchanges is how many exchanges the transcript holds.
func (r *Replay) Exchanges() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// Unused is how many recorded exchanges have not (yet) been replayed.
func (r *Replay) Unused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total - r.used
}

// Diverged is the first call that matched no recorded exchange, if any.
func (r *Replay) Diverged() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.diverged
}

// For returns the provider answering rc's calls from the transcript. Its
// evidence is replayed for a model's role; an authored role stays
// authored, since a human-written answer is never presented as a model's.
func (r *Replay) For(rc RoleConfig) (Provider, error) {
	ev := signoff.EvidenceReplayed
	if rc.Provider == ProviderAuthored {
		ev = signoff.EvidenceAuthored
	}
	return &replayProvider{r: r, role: rc.Name, evidence: ev}, nil
}

type replayProvider struct {
	r        *Replay
	role     string
	evidence string
}

func (p *replayProvider) Name() string     { return ProviderReplay }
func (p *replayProvider) Evidence() string { return p.evidence }

// Unmetered: a replayed call books the usage recorded with it (the
// recorder already booked estimates), so it is never estimated again.
func (p *replayProvider) Unmetered() bool { return true }

func (p *replayProvider) Complete(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	ex, resp, err := p.r.answer(p, req)
	if err != nil {
		return Response{}, err
	}
	if ex.Timeout {
		// The recorded call ran out of time: so does this one, and the
		// runtime books it the same way.
		<-ctx.Done()
		return Response{}, ctx.Err()
	}
	if ex.Error != "" {
		return Response{}, fmt.Errorf("replayed provider error: %s", ex.Error)
	}
	return resp, nil
}

// replayedEvidence is what a recorded exchange's evidence is when played
// back: a model's answer becomes replayed, an authored one stays authored.
func replayedEvidence(recorded string) string {
	if recorded == signoff.EvidenceAuthored {
		return signoff.EvidenceAuthored
	}
	return signoff.EvidenceReplayed
}

func (r *Replay) answer(p *replayProvider, req Request) (*exchange, Response, error) {
	turn := assistantTurns(req.Messages) + 1
	live := normalizeRequest(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	fail := func(format string, args ...any) (*exchange, Response, error) {
		err := signoff.Errorf(signoff.ECONFLICT, "replay: role %s, task kind %s, turn %d: %s", p.role, req.Task.Kind, turn, fmt.Sprintf(format, args...))
		if r.diverged == nil {
			r.diverged = err
		}
		return nil, Response{}, err
	}
	if req.Task.TaskID == "" {
		return fail("the call names no task, and a replay answers tasks")
	}
	var ex *exchange
	var pairs []tokPair
	var sc pairScope
	var commit func() // takes the answer's place in the thread
	prompt := taskPrompt(req.Messages)
	b := r.bound[req.Task.TaskID]
	if b == nil {
		var why string
		var th *replayThread
		sc = pairScope{task: req.Task.TaskID, liveRun: 1, recRun: 1}
		th, pairs, why = r.bind(p.role, req.Task.Kind, live, sc)
		if th == nil {
			return fail("%s", why)
		}
		ex = th.ex[0]
		commit = func() {
			r.bound[req.Task.TaskID] = &binding{th: th, runs: map[string]*liveRun{prompt: {id: 1, recRun: 1, next: 1}}}
			th.claimedBy = req.Task.TaskID
			th.runBound[1] = true
		}
	} else {
		if b.th.role != p.role || b.th.kind != req.Task.Kind {
			return fail("the task was replayed as role %s, kind %s", b.th.role, b.th.kind)
		}
		th := b.th
		lr := b.runs[prompt]
		if lr == nil {
			lr = &liveRun{id: len(b.runs) + 1}
		}
		// Candidates, in order: the rest of the recorded run this run is
		// answered from; then the runs no live run is answered from (the
		// recording had a run this one did not have, e.g. one a tool's
		// failure ended); then any (this run repeats a recorded
		// conversation after a failure the recording did not have). Each
		// must match the request.
		var order []int
		if lr.recRun > 0 {
			order = append(order, th.runs[lr.recRun-1][lr.next:]...)
		}
		for u, run := range th.runs {
			if !th.runBound[u+1] {
				order = append(order, run...)
			}
		}
		for i := range th.ex {
			order = append(order, i)
		}
		why, reached := "", 0
		for _, k := range order {
			cand := th.ex[k]
			reached = max(reached, cand.Turn)
			cs := pairScope{task: req.Task.TaskID, liveRun: lr.id, recRun: cand.run}
			ps, w := r.match(cand, live, cs)
			if w == "" {
				ex, pairs, sc = cand, ps, cs
				commit = func() {
					lr.recRun, lr.next = cand.run, slices.Index(th.runs[cand.run-1], k)+1
					b.runs[prompt] = lr
					th.runBound[cand.run] = true
				}
				break
			}
			if why == "" && cand.Turn == turn {
				why = fmt.Sprintf("the request differs from the recording (thread %d, call %d): %s", th.n, cand.Call, w)
			}
		}
		if ex == nil {
			if why == "" {
				why = fmt.Sprintf("turn %d was never recorded: the recorded task (thread %d) reaches turn %d", turn, th.n, reached)
			}
			return fail("%s", why)
		}
	}
	if got := replayedEvidence(ex.Evidence); got != p.evidence {
		return fail("the recorded answer is %s evidence and would be shown as %s; the role is configured for %s", ex.Evidence, got, p.evidence)
	}
	commit()
	for _, pr := range pairs {
		r.byRec[pr.rec] = append(r.byRec[pr.rec], len(r.pairs))
		r.byLive[pr.live] = append(r.byLive[pr.live], len(r.pairs))
		r.pairs = append(r.pairs, pr)
	}
	if !ex.used {
		ex.used = true
		r.used++
	}
	if ex.Response == nil {
		return ex, Response{}, nil
	}
	msg := ex.Response.Message
	msg.Role = "assistant"
	msg.Content = r.remap(msg.Content, sc)
	msg.ToolCalls = append([]ToolCall(nil), msg.ToolCalls...)
	for i := range msg.ToolCalls {
		msg.ToolCalls[i].ID = r.remap(msg.ToolCalls[i].ID, sc)
		msg.ToolCalls[i].Arguments = r.remap(msg.ToolCalls[i].Arguments, sc)
	}
	return ex, Response{Message: msg, Usage: ex.Response.Usage, FinishReason: ex.Response.FinishReason}, nil
}

// bind finds the recorded task a live task's first call is answered
// from: the first unclaimed thread, in recording order, of the same role
// and kind whose first request matches. Without one it says why, against
// the nearest candidate.
func (r *Replay) bind(role, kind string, live []normField, sc pairScope) (*replayThread, []tokPair, string) {
	var same, unclaimed int
	why := ""
	for _, th := range r.threads {
		if th.role != role || th.kind != kind {
			continue
		}
		same++
		if th.claimedBy != "" {
			continue
		}
		unclaimed++
		pairs, w := r.match(th.ex[0], live, sc)
		if w == "" {
			return th, pairs, ""
		}
		if why == "" {
			why = fmt.Sprintf("nearest recording (thread %d): %s", th.n, w)
		}
	}
	switch {
	case same == 0:
		return nil, nil, "the recording has no exchange for this role and task kind"
	case unclaimed == 0:
		return nil, nil, fmt.Sprintf("all %d recorded task(s) of this role and kind are already being replayed", same)
	}
	return nil, nil, fmt.Sprintf("no recorded task matches the request (%d candidate(s)); %s", unclaimed, why)
}

// match compares a recorded request with a live one, normalized, and
// checks that their volatile tokens correspond one to one, consistently
// with every match before that scope sees. It returns the new token pairs
// (in scope sc), or what differed.
func (r *Replay) match(ex *exchange, live []normField, sc pairScope) ([]tokPair, string) {
	if ex.norm == nil {
		ex.norm = normalizeRequest(ex.Request)
	}
	rec := ex.norm
	for i := 0; i < len(rec) && i < len(live); i++ {
		a, b := rec[i], live[i]
		if a.name != b.name {
			return nil, fmt.Sprintf("%s: recorded %s", b.name, a.name)
		}
		if a.text != b.text {
			return nil, fmt.Sprintf("%s: %s", a.name, firstDiff(a.text, b.text))
		}
	}
	if len(rec) != len(live) {
		return nil, fmt.Sprintf("recorded %d request parts, got %d", len(rec), len(live))
	}
	var pairs []tokPair
	r2l, l2r := map[string]string{}, map[string]string{}
	for i := range rec {
		for j, rt := range rec[i].toks {
			lt := live[i].toks[j]
			if got, ok := r2l[rt]; ok && got != lt {
				return nil, fmt.Sprintf("%s: the recording repeats %s where this request has %s and %s", rec[i].name, tokString(rt), tokString(got), tokString(lt))
			}
			if got, ok := l2r[lt]; ok && got != rt {
				return nil, fmt.Sprintf("%s: this request repeats %s where the recording has %s and %s", rec[i].name, tokString(lt), tokString(got), tokString(rt))
			}
			if _, ok := r2l[rt]; ok {
				continue
			}
			r2l[rt], l2r[lt] = lt, rt
			known, same := r.seen(r.byRec[rt], sc, func(p tokPair) bool { return p.live == lt })
			if known && !same {
				got, _ := r.first(r.byRec[rt], sc, true)
				return nil, fmt.Sprintf("%s: %s where the recording had %s, which this replay matched to %s", rec[i].name, tokString(lt), tokString(rt), tokString(got.live))
			}
			knownL, sameL := r.seen(r.byLive[lt], sc, func(p tokPair) bool { return p.rec == rt })
			if knownL && !sameL {
				got, _ := r.first(r.byLive[lt], sc, true)
				return nil, fmt.Sprintf("%s: %s was matched to the recording's %s, but here the recording has %s", rec[i].name, tokString(lt), tokString(got.rec), tokString(rt))
			}
			if !same {
				pairs = append(pairs, tokPair{rec: rt, live: lt, scope: sc})
			}
		}
	}
	return pairs, ""
}

// seen reports whether any pair of idx is visible in sc, and whether one
// of those satisfies ok.
func (r *Replay) seen(idx []int, sc pairScope, ok func(tokPair) bool) (known, found bool) {
	for _, i := range idx {
		if p := r.pairs[i]; p.visible(sc) {
			known = true
			if ok(p) {
				return true, true
			}
		}
	}
	return known, false
}

// first is the pair of idx visible in sc, preferring one matched in sc
// itself when own is set.
func (r *Replay) first(idx []int, sc pairScope, own bool) (tokPair, bool) {
	var out tokPair
	found := false
	for _, i := range idx {
		p := r.pairs[i]
		if !p.visible(sc) {
			continue
		}
		if own && p.scope == sc {
			return p, true
		}
		if !found {
			out, found = p, true
		}
	}
	return out, found
}

// remap replaces the recording's volatile tokens in s by the live tokens
// they were matched to in scope sc; tokens never matched stay as recorded.
func (r *Replay) remap(s string, sc pairScope) string {
	var b strings.Builder
	last := 0
	anyHex := func(string) bool { return true } // only matched tokens are replaced
	eachVolatile(s, anyHex, func(start, end int, class string) {
		if !mappedClass(class) {
			return
		}
		if p, ok := r.first(r.byRec[class+":"+s[start:end]], sc, true); ok {
			b.WriteString(s[last:start])
			b.WriteString(strings.TrimPrefix(p.live, class+":"))
			last = end
		}
	})
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func tokString(t string) string {
	class, v, _ := strings.Cut(t, ":")
	return fmt.Sprintf("%s %q", class, v)
}

// firstDiff shows where two texts part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-40)
	for lo > 0 && !utf8.RuneStart(a[lo]) {
		lo--
	}
	clip := func(s string) string {
		s = s[lo:]
		if len(s) > 120 {
			n := 120
			for n > 0 && !utf8.RuneStart(s[n]) {
				n--
			}
			s = s[:n] + "…"
		}
		if lo > 0 {
			s = "…" + s
		}
		return strconv.Quote(s)
	}
	return fmt.Sprintf("recorded %s, got %s (first difference at byte %d)", clip(a), clip(b), i)
}

// normField is one part of a request, normalized: text with its volatile
// tokens replaced by <class>, and the mapped tokens in order.
type normField struct {
	name string
	text string
	toks []string
}

// normalizeRequest splits a request into the parts a replay compares, in
// order: model and limits, the tools offered (names, then each one's
// description and schema), then each message.
func normalizeRequest(q Request) []normField {
	// Prefixes of the request's long hex tokens (full commit SHAs,
	// digests) are hex wherever they appear, even all digits.
	prefixes := map[string]bool{}
	var scanLong func(string)
	scanLong = func(s string) {
		for _, h := range longHexRE.FindAllString(s, -1) {
			for n := 7; n < len(h) && n <= 16; n++ {
				prefixes[h[:n]] = true
			}
		}
	}
	for _, m := range q.Messages {
		scanLong(m.Content)
		for _, tc := range m.ToolCalls {
			scanLong(tc.Arguments)
		}
	}
	known := func(tok string) bool { return prefixes[tok] }
	var out []normField
	add := func(name, text string) {
		n, toks := normalize(text, known)
		out = append(out, normField{name: name, text: n, toks: toks})
	}
	add("model", q.Model)
	add("max_tokens", strconv.Itoa(q.MaxTokens))
	temp := "unset"
	if q.Temperature != nil {
		temp = strconv.FormatFloat(*q.Temperature, 'g', -1, 64)
	}
	add("temperature", temp)
	names := make([]string, len(q.Tools))
	for i, t := range q.Tools {
		names[i] = t.Name
	}
	add("tools offered", "["+strings.Join(names, ", ")+"]")
	for _, t := range q.Tools {
		params := []byte(t.Parameters)
		if c, err := canonical.Transform(params); err == nil {
			params = c
		}
		add("tool "+t.Name, t.Description+"\n"+string(params))
	}
	add("message count", strconv.Itoa(len(q.Messages)))
	// Tool call ids are the provider's, fresh in every answer: they are
	// compared by where they recur, not by value.
	callIDs := map[string]string{}
	callID := func(id string) string {
		if _, ok := callIDs[id]; !ok {
			callIDs[id] = fmt.Sprintf("<call %d>", len(callIDs)+1)
		}
		return callIDs[id]
	}
	for i, m := range q.Messages {
		what := m.Role
		if m.Role == "tool" {
			what = "result of tool " + m.Name
		}
		var b strings.Builder
		b.WriteString(m.Role)
		if m.Name != "" {
			b.WriteString(" name=" + m.Name)
		}
		if m.ToolCallID != "" {
			b.WriteString(" tool_call_id=" + callID(m.ToolCallID))
		}
		b.WriteString(": " + m.Content)
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "\ncall id=%s %s(%s)", callID(tc.ID), tc.Name, tc.Arguments)
		}
		add(fmt.Sprintf("message %d (%s)", i+1, what), b.String())
	}
	return out
}

// Volatile tokens: what legitimately differs between two runs of the same
// walk. Mapped classes are matched one to one between the recording and
// the replay (and replayed answers quote the live token); the others are
// only blanked.
var volatileRE = regexp.MustCompile(strings.Join([]string{
	// the airlock's spotlight markers, whose last token is a fresh random
	// boundary: <<<REPORT b>>>, <<<END DATA ref b>>>
	`(?P<boundary><<<(?:END )?[A-Z]+(?: [A-Za-z0-9_-]{1,64})? [A-Za-z0-9_-]{16,128}>>>)`,
	// ids: prefix_ then 26 base32 characters (signoff.NewID)
	`(?P<id>[a-z]{1,16}_[0-9a-hjkmnp-tv-z]{26})`,
	// timestamps: RFC 3339 and Go's time.String, dates, git and HTTP dates;
	// ˆ is the airlock's datamark standing for whitespace
	`(?P<time>\d{4}-\d{2}-\d{2}(?:[T ˆ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?:[ ˆ][+-]\d{4}(?:[ ˆ][A-Z]{3,5})?)?(?:[ ˆ]UTC)?(?:[ ˆ]m=[+-]\d+\.\d+)?)?` +
		`|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),?[ ˆ](?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[ ˆ]+\d{1,2}[ ˆ]\d{2}:\d{2}:\d{2}[ ˆ]\d{4}(?:[ ˆ][+-]\d{4})?` +
		`|\d{2}[ ˆ](?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[ ˆ]\d{4}[ ˆ]\d{2}:\d{2}:\d{2}[ ˆ]GMT))`,
	// temporary paths
	`(?P<tmp>` + tmpRoots() + `(?:/[A-Za-z0-9._+@%=,~-]+)+)`,
	// loopback addresses with a port (test servers)
	`(?P<addr>(?:127\.0\.0\.1|localhost|\[::1\]):\d{2,5})`,
	// hex: digests, commit SHAs (full or short), airlock boundaries
	`(?P<hex>[0-9a-f]{7,})`,
	// durations: go test's "0.012s", "(0.00s)", "(cached)", "1.5ms", "2m3s"
	`(?P<dur>\d+(?:\.\d+)?(?:ns|µs|us|ms)|(?:\d+h)?(?:\d+m)?\d+\.\d+s|(?:\d+h)?\d+m\d+s|\(cached\))`,
}, "|"))

var longHexRE = regexp.MustCompile(`[0-9a-f]{32,}`)

func tmpRoots() string {
	roots := []string{"/tmp", "/var/tmp", "/var/folders", "/private/var/folders"}
	if d := strings.TrimRight(os.TempDir(), "/"); d != "" && !contains(roots, d) {
		roots = append(roots, d)
	}
	for i, r := range roots {
		roots[i] = regexp.QuoteMeta(r)
	}
	return "(?:" + strings.Join(roots, "|") + ")"
}

func mappedClass(class string) bool { return class == "id" || class == "hex" || class == "tmp" }

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// eachVolatile calls fn for every volatile token of s, left to right. A
// candidate glued to neighbouring letters or digits is part of a longer
// word and not a token.
//
// A run of hex the rules above do not take (all digits, say: a short
// commit SHA can be) is still one when known says so: normalizeRequest
// knows the prefixes of the long hex tokens in the same request.
func eachVolatile(s string, known func(string) bool, fn func(start, end int, class string)) {
	names := volatileRE.SubexpNames()
	for pos := 0; pos < len(s); {
		m := volatileRE.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			return
		}
		start, end := pos+m[0], pos+m[1]
		class := ""
		for g := 1; g < len(names); g++ {
			if m[2*g] >= 0 && names[g] != "" {
				class = names[g]
				break
			}
		}
		var prev, next byte = ' ', ' '
		if start > 0 {
			prev = s[start-1]
		}
		if end < len(s) {
			next = s[end]
		}
		ok := true
		switch class {
		case "id":
			ok = !isAlnum(next)
		case "time":
			ok = !(prev >= '0' && prev <= '9') && !(next >= '0' && next <= '9')
		case "tmp":
			ok = !isAlnum(prev) && prev != '.' && prev != '_' && prev != '-'
		case "addr":
			ok = !isAlnum(prev) && prev != '.' && !(next >= '0' && next <= '9')
		case "hex":
			tok := s[start:end]
			ok = !isAlnum(prev) && !isAlnum(next) &&
				(len(tok) >= 32 || strings.ContainsAny(tok, "0123456789") && strings.ContainsAny(tok, "abcdef") || known != nil && known(tok))
		case "dur":
			ok = (!isAlnum(prev) && prev != '.' || s[start] == '(') && !isAlnum(next)
		}
		if ok {
			fn(start, end, class)
		}
		pos = end
	}
}

var placeholderEscaper = func() *strings.Replacer {
	var pairs []string
	for _, c := range volatileRE.SubexpNames() {
		if c != "" {
			pairs = append(pairs, "<"+c+">", "<!"+c+">")
		}
	}
	return strings.NewReplacer(pairs...)
}()

// normalize blanks s's volatile tokens and lists its mapped ones. Text
// that spells a blank itself ("<id>") is escaped, so it cannot pass for
// one.
func normalize(s string, known func(string) bool) (string, []string) {
	var b strings.Builder
	var toks []string
	last := 0
	lit := func(t string) { b.WriteString(placeholderEscaper.Replace(t)) }
	eachVolatile(s, known, func(start, end int, class string) {
		lit(s[last:start])
		if class == "boundary" {
			// Keep the marker and its ref; blank only the boundary.
			m := s[start:end]
			sp := strings.LastIndexByte(m, ' ')
			n, tk := normalize(m[3:sp+1], known)
			b.WriteString("<<<" + n + "<boundary>>>>")
			toks = append(toks, tk...)
			last = end
			return
		}
		b.WriteString("<" + class + ">")
		if mappedClass(class) {
			toks = append(toks, class+":"+s[start:end])
		}
		last = end
	})
	lit(s[last:])
	return b.String(), toks
}
