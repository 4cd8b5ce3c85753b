package main

import (
	"encoding/base64"
	"fmt"
	"sync/atomic"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// Authentication. Client credentials come from LOADGEN_CLIENT_ID and
// LOADGEN_CLIENT_SECRET (for example svc's bootstrap client); with them,
// Run fetches a token before the scenario's setup and every call, setup
// included, carries it (setAuth).

// clientCreds are a run's client credentials.
type clientCreds struct{ id, secret string }

var (
	// creds are the run's client credentials (Options.ClientID/Secret).
	creds atomic.Value
	// authz is the Authorization header every call of the run sends
	// ("" when the server runs without authentication).
	authz atomic.Value
)

// setAuth adds the run's bearer token unless the request carries its own
// Authorization (the token scenario's Basic credentials).
func setAuth(req *fasthttp.Request) {
	if h, _ := authz.Load().(string); h != "" && len(req.Header.Peek("Authorization")) == 0 {
		req.Header.Set("Authorization", h)
	}
}

// authScenarios adds the scenarios of this file to scenarios.
func authScenarios(scenarios map[string]Scenario) {
	scenarios["token"] = Scenario{
		Describe: "POST {ctx}/oauth/token, client_credentials (one RS256 signature per request)",
		Setup: func(*fasthttp.Client, string) error {
			if c, _ := creds.Load().(clientCreds); c.id == "" {
				return fmt.Errorf("set LOADGEN_CLIENT_ID and LOADGEN_CLIENT_SECRET")
			}
			return nil
		},
		Build: func(req *fasthttp.Request, base string, _ int, _ uint64) {
			buildTokenRequest(req, base)
		},
		OK: func(s int) bool { return s == 200 },
	}
	scenarios["authget"] = Scenario{
		Describe: "GET {ctx}/model/ with a bearer token (verified-token cache hit); in mock mode the same GET without one",
		// In mock mode (no client credentials) the same GET goes without a
		// token: the comparison baseline.
		Build: func(req *fasthttp.Request, base string, _ int, _ uint64) {
			req.SetRequestURI(base + "/model/")
			req.Header.SetMethod("GET")
		},
		// 501 until the model area is built: the route's handler is the same
		// in both modes, so the difference measured is authentication.
		OK: func(s int) bool { return s == 200 || s == 501 },
	}
}

func buildTokenRequest(req *fasthttp.Request, base string) {
	req.SetRequestURI(base + "/oauth/token")
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/x-www-form-urlencoded")
	c, _ := creds.Load().(clientCreds)
	cred := c.id + ":" + c.secret
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	req.SetBodyString("grant_type=client_credentials")
}

func fetchToken(c *fasthttp.Client, base string) (string, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	buildTokenRequest(req, base)
	if err := c.Do(req, resp); err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	if resp.StatusCode() != 200 {
		return "", fmt.Errorf("token request: %d %s", resp.StatusCode(), resp.Body())
	}
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(resp.Body(), &body); err != nil || body.AccessToken == "" {
		return "", fmt.Errorf("token response: %s", resp.Body())
	}
	return body.AccessToken, nil
}
