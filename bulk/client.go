package bulk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// Client reaches one svc API (URL includes the context path, e.g.
// http://127.0.0.1:8080/api). Credentials: a bearer token, or a machine
// client's id and secret exchanged at the token endpoint (and again when
// the token is refused); neither in mock mode.
type Client struct {
	URL          string
	Token        string
	ClientID     string
	ClientSecret string
	HTTP         *http.Client

	mu    sync.Mutex
	token string
}

// APIError is a problem+json answer of svc.
type APIError struct {
	Status int
	Code   string
	Detail string
	Props  map[string]any
}

func (e *APIError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%d %s", e.Status, e.Detail)
	}
	return fmt.Sprintf("HTTP %d", e.Status)
}

// Retryable reports whether svc said the request changed nothing and may
// be sent again.
func (e *APIError) Retryable() bool {
	r, _ := e.Props["retryable"].(bool)
	return r || e.Status == http.StatusServiceUnavailable || e.Status == http.StatusTooManyRequests
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) bearer(ctx context.Context, refresh bool) (string, error) {
	if c.Token != "" || c.ClientID == "" {
		return c.Token, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && !refresh {
		return c.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequestWithContext(ctx, "POST", c.URL+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	req.SetBasicAuth(c.ClientID, c.ClientSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http().Do(req)
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&tok); err != nil || resp.StatusCode != 200 || tok.AccessToken == "" {
		return "", fmt.Errorf("token endpoint answered %d %s %s", resp.StatusCode, tok.Error, tok.Description)
	}
	c.token = tok.AccessToken
	return c.token, nil
}

// Do sends one request and returns the response of a 2xx; any other
// status is an *APIError. body is re-read on a token refresh, so it must
// be a *bytes.Reader or nil.
func (c *Client) Do(ctx context.Context, method, path string, body *bytes.Reader, ctype string) (*http.Response, error) {
	return c.DoKeyed(ctx, method, path, body, ctype, "")
}

// DoKeyed is Do with an Idempotency-Key header when key is not empty: a
// repeat of the request (a retry, a resumed import) replays the first
// answer instead of writing again.
func (c *Client) DoKeyed(ctx context.Context, method, path string, body *bytes.Reader, ctype, key string) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		tok, err := c.bearer(ctx, attempt > 0)
		if err != nil {
			return nil, err
		}
		var rd io.Reader
		if body != nil {
			body.Seek(0, io.SeekStart)
			rd = body
		}
		req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := c.http().Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		if resp.StatusCode/100 == 2 {
			return resp, nil
		}
		apiErr := readProblem(resp)
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 && c.ClientID != "" && c.Token == "" {
			continue
		}
		return nil, apiErr
	}
}

func readProblem(resp *http.Response) *APIError {
	defer resp.Body.Close()
	e := &APIError{Status: resp.StatusCode}
	var p struct {
		Detail     string         `json:"detail"`
		Properties map[string]any `json:"properties"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if json.Unmarshal(b, &p) == nil {
		e.Detail, e.Props = p.Detail, p.Properties
		e.Code, _ = p.Properties["errorCode"].(string)
	} else {
		e.Detail = strings.TrimSpace(string(b[:min(len(b), 300)]))
	}
	return e
}

// JSON sends a request and decodes a JSON answer into out (nil: discard).
func (c *Client) JSON(ctx context.Context, method, path string, body []byte, out any) error {
	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	resp, err := c.Do(ctx, method, path, rd, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// retry runs fn until it succeeds, fails for good, or attempts run out;
// it retries only what svc called retryable, and refused connections
// (nothing was sent).
func retry(ctx context.Context, attempts int, fn func() error) error {
	backoff := 200 * time.Millisecond
	for i := 1; ; i++ {
		err := fn()
		if err == nil || i >= attempts || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func retryable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Retryable()
	}
	return strings.Contains(err.Error(), "connection refused")
}

// CheckAuth makes one authenticated request (GET /account) before any
// work, so missing or refused credentials fail once with what to give
// instead of on whichever batch comes first (issue 26). Mock mode and a
// valid token pass; a 401 names the flags.
func (c *Client) CheckAuth(ctx context.Context) error {
	resp, err := c.Do(ctx, "GET", "/account", nil, "")
	if err == nil {
		resp.Body.Close()
		return nil
	}
	var ae *APIError
	if !errors.As(err, &ae) && c.ClientID != "" && strings.Contains(err.Error(), "token endpoint answered") {
		return fmt.Errorf("svc at %s did not issue a token for --client-id %s and --client-secret (SVC_CLI_CLIENT_ID, SVC_CLI_CLIENT_SECRET): %w", c.URL, c.ClientID, err)
	}
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		if errors.As(err, &ae) {
			return fmt.Errorf("checking credentials at %s/account: %w", c.URL, err)
		}
		return fmt.Errorf("reaching svc at %s: %w", c.URL, err)
	}
	if c.Token == "" && c.ClientID == "" {
		return fmt.Errorf("svc at %s needs credentials (401 %s): give --token (or SVC_CLI_TOKEN), or --client-id and --client-secret (or SVC_CLI_CLIENT_ID and SVC_CLI_CLIENT_SECRET) of a machine client", c.URL, ae.Detail)
	}
	if c.Token != "" {
		return fmt.Errorf("svc at %s refused the token of --token / SVC_CLI_TOKEN (401 %s): it is expired, revoked or not signed by svc", c.URL, ae.Detail)
	}
	return fmt.Errorf("svc at %s refused the token issued to --client-id %s (401 %s)", c.URL, c.ClientID, ae.Detail)
}
