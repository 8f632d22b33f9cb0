package main

// Feature flags. ShopLite reads its checkout flag from a flag service over
// OFREP, the OpenFeature Remote Evaluation Protocol, with a small client
// of its own (standard library only):
//
//	POST {SHOPLITE_OFREP_URL}/ofrep/v1/evaluate/flags/{flag}
//	Authorization: Bearer {SHOPLITE_OFREP_KEY}
//	{"context":{...}}
//
// The settings come from the environment:
//
//	SHOPLITE_OFREP_URL      the flag service's base URL (http://host:port);
//	                        unset or empty: no flag is read, checkout uses
//	                        the old payment flow
//	SHOPLITE_OFREP_KEY      the environment's API key (sof_...)
//	SHOPLITE_CHECKOUT_FLAG  the boolean flag that turns on the new payment
//	                        flow; default checkout_v2_new_payment_flow
//
// The flag is evaluated on every checkout, without a cache, so a flip
// shows on the next request. When the evaluation fails (the service is
// down or slow, the key is refused, the flag is missing or not a
// boolean), checkout uses the default value false, as OpenFeature does,
// and logs why; the X-Flag-Source response header says which it was:
// "ofrep" or "default".

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Environment variables of the flag settings.
const (
	envOFREPURL     = "SHOPLITE_OFREP_URL"
	envOFREPKey     = "SHOPLITE_OFREP_KEY"
	envCheckoutFlag = "SHOPLITE_CHECKOUT_FLAG"
)

const (
	defaultCheckoutFlag = "checkout_v2_new_payment_flow"
	flagTimeout         = 2 * time.Second // one evaluation, connection included
	maxFlagResponse     = 64 << 10
)

// Values of the X-Flag-Source header.
const (
	sourceOFREP   = "ofrep"   // the flag service answered
	sourceDefault = "default" // it did not: the default value was used
)

// ofrepClient evaluates flags with OFREP's single-flag endpoint.
type ofrepClient struct {
	base   string // the service's base URL, without a trailing slash
	key    string // the API key, sent as a bearer token
	client *http.Client
}

func newOFREPClient(baseURL, key string) (*ofrepClient, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s=%q: want the flag service's base URL, such as http://127.0.0.1:8080", envOFREPURL, baseURL)
	}
	base := strings.TrimRight(u.String(), "/")
	// Accept the OFREP root too: the client adds /ofrep/v1 itself.
	base = strings.TrimSuffix(strings.TrimSuffix(base, "/ofrep/v1"), "/ofrep")
	return &ofrepClient{
		base: base,
		key:  strings.TrimSpace(key),
		client: &http.Client{
			Timeout: flagTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}, nil
}

// evalContext is the evaluation context sent with every request.
var evalContext = map[string]any{"targetingKey": "shoplite", "service": "shoplite"}

// Bool evaluates the boolean flag key. Any failure is an error: the
// caller falls back to its default value.
func (c *ofrepClient) Bool(ctx context.Context, key string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, flagTimeout)
	defer cancel()
	body, err := json.Marshal(map[string]any{"context": evalContext})
	if err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		c.base+"/ofrep/v1/evaluate/flags/"+url.PathEscape(key), bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return false, fmt.Errorf("flag service unreachable: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxFlagResponse))
	if err != nil {
		return false, fmt.Errorf("reading the flag service's answer: %w", err)
	}
	// Success and failure share one shape's fields, all optional here.
	var out struct {
		Key          string          `json:"key"`
		Value        json.RawMessage `json:"value"`
		Reason       string          `json:"reason"`
		Variant      string          `json:"variant"`
		ErrorCode    string          `json:"errorCode"`
		ErrorDetails string          `json:"errorDetails"`
	}
	jsonErr := json.Unmarshal(data, &out)
	if resp.StatusCode != http.StatusOK {
		msg := resp.Status
		if jsonErr == nil && out.ErrorCode != "" {
			msg += " " + out.ErrorCode
		}
		if jsonErr == nil && out.ErrorDetails != "" {
			msg += ": " + out.ErrorDetails
		}
		return false, errors.New("flag service answered " + msg)
	}
	if jsonErr != nil {
		return false, fmt.Errorf("flag service answered 200 with no evaluation: %v", jsonErr)
	}
	if out.ErrorCode != "" {
		return false, fmt.Errorf("flag service answered %s: %s", out.ErrorCode, out.ErrorDetails)
	}
	var v bool
	if err := json.Unmarshal(out.Value, &v); err != nil || len(out.Value) == 0 {
		return false, fmt.Errorf("TYPE_MISMATCH: flag %s is %s, not a boolean", key, nonEmpty(string(out.Value), "missing"))
	}
	return v, nil
}

func nonEmpty(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// checkoutFlag is the flag that turns on the new payment flow.
type checkoutFlag struct {
	client *ofrepClient
	key    string
}

// checkoutFlagFromEnv reads the flag settings; nil when SHOPLITE_OFREP_URL
// is unset or empty (no flag is read).
func checkoutFlagFromEnv() (*checkoutFlag, error) {
	base := strings.TrimSpace(os.Getenv(envOFREPURL))
	if base == "" {
		return nil, nil
	}
	c, err := newOFREPClient(base, os.Getenv(envOFREPKey))
	if err != nil {
		return nil, err
	}
	key := strings.TrimSpace(os.Getenv(envCheckoutFlag))
	if key == "" {
		key = defaultCheckoutFlag
	}
	if c.key == "" {
		log.Printf("flags: %s is not set: the flag service will refuse every evaluation and checkout will use the default", envOFREPKey)
	}
	return &checkoutFlag{client: c, key: key}, nil
}

// newPaymentFlow evaluates the flag: its value and where it came from. On
// any failure it is false (the default), and the failure is logged.
func (f *checkoutFlag) newPaymentFlow(ctx context.Context) (bool, string) {
	on, err := f.client.Bool(ctx, f.key)
	if err != nil {
		log.Printf("flags: %s: %v; using the default value false", f.key, err)
		return false, sourceDefault
	}
	return on, sourceOFREP
}
