package changedesk

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
)

// Intent is what the builtin planner read from a request: one flag write.
type Intent struct {
	Target  string          `json:"target"`
	Params  json.RawMessage `json:"params"`
	Summary string          `json:"summary"`
}

var (
	wordRE  = regexp.MustCompile(`[A-Za-z0-9_.\-]+`)
	setToRE = regexp.MustCompile(`(?i)\bset\s+(?:the\s+)?(?:flag\s+)?([A-Za-z0-9_.\-]+)\s+to\s+(.+?)\s*(?:\bin\b|\bfor\b|$)`)
)

// envSynonyms maps the names people say to the names environments often
// have; a synonym counts only if the flag has an environment of that name.
var envSynonyms = map[string][]string{
	"production": {"prod", "prd", "live"}, "prod": {"production", "prd", "live"}, "live": {"prod", "production"},
	"staging": {"stage", "stg"}, "stage": {"staging", "stg"}, "stg": {"staging", "stage"},
	"development": {"dev"}, "dev": {"development"},
}

// ParseIntent is the builtin planner's reading of a change request: it
// supports turning a boolean flag on or off ("disable X in prod", "turn
// off X", "enable X in staging") and setting a flag to a value ("set X to
// 25 in prod"), for a flag that exists among flags. It never guesses: a
// request naming no known flag, several flags, an environment the flag is
// not in (when it is in several), or no supported action is EINVALID,
// and a person or a model planner drafts the plan instead.
func ParseIntent(text string, flags []signoff.Flag) (Intent, error) {
	words := wordRE.FindAllString(text, -1)
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(strings.Trim(w, ".-"))
	}
	// The flag: a word equal to a known key (keys are case-sensitive in
	// the store; a request may capitalise them).
	keys := map[string]bool{}
	var key string
	for _, f := range flags {
		for _, w := range words {
			if strings.EqualFold(strings.Trim(w, ".-"), f.Key) {
				keys[f.Key], key = true, f.Key
			}
		}
	}
	switch len(keys) {
	case 0:
		return Intent{}, signoff.Errorf(signoff.EINVALID, "the builtin planner found no known flag named in the request")
	case 1:
	default:
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		slices.Sort(names)
		return Intent{}, signoff.Errorf(signoff.EINVALID, "the request names several flags (%s): one change per request", strings.Join(names, ", "))
	}
	var envs []string
	for _, f := range flags {
		if f.Key == key {
			envs = append(envs, f.Environment)
		}
	}
	env, err := pickEnv(lower, envs)
	if err != nil {
		return Intent{}, err
	}
	value, summary, err := pickAction(text, lower, key)
	if err != nil {
		return Intent{}, err
	}
	t := change.Target{Kind: change.KindFlag, Env: env, Name: key}
	params, err := json.Marshal(map[string]json.RawMessage{"value": value})
	if err != nil {
		return Intent{}, err
	}
	return Intent{Target: t.String(), Params: params, Summary: fmt.Sprintf("%s %s in %s", summary, key, env)}, nil
}

func pickEnv(words, envs []string) (string, error) {
	var said []string
	for _, e := range envs {
		names := append([]string{strings.ToLower(e)}, envSynonyms[strings.ToLower(e)]...)
		for _, n := range names {
			if slices.Contains(words, n) && !slices.Contains(said, e) {
				said = append(said, e)
			}
		}
	}
	switch {
	case len(said) == 1:
		return said[0], nil
	case len(said) > 1:
		return "", signoff.Errorf(signoff.EINVALID, "the request names several environments (%s): one change per request", strings.Join(said, ", "))
	case len(envs) == 1:
		return envs[0], nil
	}
	slices.Sort(envs)
	return "", signoff.Errorf(signoff.EINVALID, "the flag exists in %s: say which environment", strings.Join(envs, ", "))
}

func pickAction(text string, words []string, key string) (json.RawMessage, string, error) {
	has := func(ws ...string) bool {
		for _, w := range ws {
			if slices.Contains(words, w) {
				return true
			}
		}
		return false
	}
	bigram := func(a string, bs ...string) bool {
		for i := 0; i+1 < len(words); i++ {
			if words[i] == a && slices.Contains(bs, words[i+1]) {
				return true
			}
		}
		return false
	}
	off := has("disable", "deactivate", "kill") || bigram("turn", "off") || bigram("switch", "off") || bigram("roll", "back")
	on := has("enable", "activate") || bigram("turn", "on") || bigram("switch", "on")
	if m := setToRE.FindStringSubmatch(text); m != nil && strings.EqualFold(m[1], key) {
		if off || on {
			return nil, "", signoff.Errorf(signoff.EINVALID, "the request both sets and toggles the flag: say one")
		}
		raw := strings.TrimSpace(strings.Trim(strings.TrimSpace(m[2]), "."))
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err == nil {
			return json.RawMessage(raw), "set", nil
		}
		b, _ := json.Marshal(raw)
		return b, "set", nil
	}
	switch {
	case off && on:
		return nil, "", signoff.Errorf(signoff.EINVALID, "the request asks both to enable and to disable: say one")
	case off:
		return json.RawMessage("false"), "disable", nil
	case on:
		return json.RawMessage("true"), "enable", nil
	}
	return nil, "", signoff.Errorf(signoff.EINVALID, "the builtin planner supports enable, disable and set ... to ...; this request is for a person or a model planner")
}
