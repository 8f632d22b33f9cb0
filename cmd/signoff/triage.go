package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/triage"
)

// errBelowMin is the eval's score falling short of --min.
type errBelowMin struct{ score, min int }

func (e *errBelowMin) Error() string {
	return fmt.Sprintf("score %d is below the minimum %d", e.score, e.min)
}

func runTriage(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "triage", args, "eval", "run")
	if err != nil {
		return err
	}
	var dataset, provider, rolesFile, item, keep, baseURL, model, keyEnv string
	var asJSON bool
	var min int
	syn := "signoff triage eval --dataset DIR [--provider builtin|openai (--roles FILE | --base-url URL --model NAME [--api-key-env VAR])] [--json] [--min N] [--keep DIR]"
	if verb == "run" {
		syn = "signoff triage run --dataset DIR --item ID [--provider builtin|openai (--roles FILE | --base-url URL --model NAME [--api-key-env VAR])] [--keep DIR]"
	}
	fs := newFlags("triage "+verb, syn)
	fs.StringVar(&dataset, "dataset", "", "dataset folder in the orbit_run layout (required)")
	fs.StringVar(&provider, "provider", "builtin", "builtin (deterministic, offline) or openai (roles from --roles)")
	fs.StringVar(&rolesFile, "roles", "", "role configuration YAML for the openai provider (intake, investigator, triage, writer)")
	fs.StringVar(&baseURL, "base-url", "", "OpenAI-compatible endpoint for all four roles, instead of --roles (e.g. http://localhost:11434/v1)")
	fs.StringVar(&model, "model", "", "model for all four roles, with --base-url")
	fs.StringVar(&keyEnv, "api-key-env", "", "environment variable holding the endpoint's API key, with --base-url")
	fs.StringVar(&keep, "keep", "", "keep the eval's database, key and ledger in this folder (default: a temporary one, removed)")
	if verb == "eval" {
		fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
		fs.IntVar(&min, "min", -1, "exit 1 when the score is below N")
	} else {
		fs.StringVar(&item, "item", "", "the item id to run (required)")
	}
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	if err := required(fs, e, "dataset", dataset); err != nil {
		return err
	}
	if verb == "run" {
		if err := required(fs, e, "item", item); err != nil {
			return err
		}
	}
	d, err := triage.LoadDataset(os.DirFS(dataset))
	if err != nil {
		return signoff.Errorf(signoff.EINVALID, "dataset %s: %v", dataset, err)
	}
	roles, err := crewRoles(provider, rolesFile, baseURL, model, keyEnv)
	if err != nil {
		return err
	}
	st, cleanup, err := scratchStore(ctx, keep)
	if err != nil {
		return err
	}
	defer cleanup()
	fac, err := providers(e, "", st)
	if err != nil {
		return err
	}
	reg := toolRegistry()
	rt := &agent.Runtime{Store: st, Tools: reg, Providers: fac.Make}
	if verb == "eval" {
		rep, err := crew.Eval(ctx, st, rt, d, roles, provider)
		if err != nil {
			return err
		}
		if asJSON {
			b, err := rep.JSON()
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, string(b))
		} else {
			fmt.Fprint(e.stdout, rep.Table())
		}
		if min >= 0 && rep.Score < min {
			return &errBelowMin{rep.Score, min}
		}
		return nil
	}
	return triageOne(ctx, e, st, rt, d, roles, item)
}

// crewRoles is the crew's configuration: the builtin roles, the
// operator's file for a model, or the crew's own prompts on one endpoint
// and model.
func crewRoles(provider, file, baseURL, model, keyEnv string) (string, error) {
	endpoint := baseURL != "" || model != "" || keyEnv != ""
	switch provider {
	case agent.ProviderBuiltin:
		if file != "" || endpoint {
			return "", signoff.Errorf(signoff.EINVALID, "--roles, --base-url, --model and --api-key-env are for --provider openai")
		}
		return crew.Roles(agent.ProviderBuiltin), nil
	case agent.ProviderOpenAI:
		switch {
		case file != "" && endpoint:
			return "", signoff.Errorf(signoff.EINVALID, "give --roles FILE or --base-url and --model, not both")
		case file != "":
			b, err := os.ReadFile(file)
			return string(b), err
		case baseURL == "" || model == "":
			return "", signoff.Errorf(signoff.EINVALID, "--provider openai needs --roles FILE configuring intake, investigator, triage and writer (see docs/agents.md), or --base-url URL and --model NAME")
		}
		return crew.ModelRoles(baseURL, model, keyEnv)
	}
	return "", signoff.Errorf(signoff.EINVALID, "unknown provider %q (builtin or openai)", provider)
}

// scratchStore opens a fresh SQLite store with its own signing key, in keep
// or in a temporary folder removed by cleanup.
func scratchStore(ctx context.Context, keep string) (*sqlstore.DB, func(), error) {
	dir, cleanup := keep, func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "signoff-triage-")
		if err != nil {
			return nil, nil, err
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil, nil, err
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "signoff.db"), sqlstore.Options{Signer: key})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return st, func() { st.Close(); cleanup() }, nil
}

// triageOne runs one item and stops at the human gate, asking on the
// terminal: approve, reject, or a corrected severity.
func triageOne(ctx context.Context, e *env, st *sqlstore.DB, rt *agent.Runtime, d triage.Dataset, roles, itemID string) error {
	var it *triage.Item
	for i := range d.Items {
		if d.Items[i].ID == itemID {
			it = &d.Items[i]
		}
	}
	if it == nil {
		return signoff.Errorf(signoff.ENOTFOUND, "no item %s in the dataset", itemID)
	}
	setup, err := crew.NewEvalSetup(ctx, st, rt, d, roles)
	if err != nil {
		return err
	}
	caseID, err := setup.Submit(ctx, *it)
	if err != nil {
		return err
	}
	run, _, err := setup.Run(ctx, caseID, false)
	if err != nil {
		return err
	}
	if run.Status == signoff.TriageParked {
		gate, err := crew.GateOf(ctx, st, setup.Operator, caseID)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "HUMAN GATE: decision %s over digest %s\n", gate.DecisionID, gate.Digest)
		var pretty map[string]any
		json.Unmarshal(gate.Proposal, &pretty)
		b, _ := json.MarshalIndent(pretty, "  ", "  ")
		fmt.Fprintf(e.stdout, "  %s\n", b)
		fmt.Fprint(e.stdout, "approve? [yes / no <reason> / low|medium|high|critical to approve with that severity]: ")
		line, _ := bufio.NewReader(e.stdin).ReadString('\n')
		line = strings.TrimSpace(line)
		approve, reason, amend := true, "", json.RawMessage(nil)
		switch {
		case line == "":
			fmt.Fprintln(e.stdout, "\nno answer: the case stays parked at the gate; nothing was filed")
			return printTriageRun(ctx, e, st, setup, it.ID, caseID)
		case strings.EqualFold(line, "yes") || strings.EqualFold(line, "y"):
		case triage.SeverityRank(strings.ToLower(line)) >= 0:
			amend = json.RawMessage(fmt.Sprintf(`{"severity":%q}`, strings.ToLower(line)))
			reason = "severity corrected to " + strings.ToLower(line)
		case strings.HasPrefix(strings.ToLower(line), "no"):
			approve, reason = false, strings.TrimSpace(line[2:])
			if reason == "" {
				reason = "rejected at the terminal"
			}
		default:
			return signoff.Errorf(signoff.EINVALID, "answer yes, no <reason>, or a severity")
		}
		if _, err := st.DecideAmended(ctx, setup.Operator, gate.DecisionID, gate.Digest, approve, reason, amend); err != nil {
			return err
		}
		if _, err := setup.Runner.Drive(ctx, setup.Workspace, caseID); err != nil {
			return err
		}
	}
	return printTriageRun(ctx, e, st, setup, it.ID, caseID)
}

func printTriageRun(ctx context.Context, e *env, st *sqlstore.DB, setup *crew.EvalSetup, itemID, caseID string) error {
	res, err := crew.ResultOf(ctx, st, setup.Operator, itemID, caseID)
	if err != nil {
		return err
	}
	c, err := st.GetCase(ctx, setup.Operator, caseID)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "item %s: category %s, outcome %s, case state %s", itemID, res.Category, res.Outcome, c.State)
	if res.DuplicateOf != "" {
		fmt.Fprintf(e.stdout, ", duplicate of %s", res.DuplicateOf)
	}
	if res.Component != "" {
		fmt.Fprintf(e.stdout, ", %s/%s", res.Component, res.Severity)
	}
	fmt.Fprintln(e.stdout)
	return nil
}
