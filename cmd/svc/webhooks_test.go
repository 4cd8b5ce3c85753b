package main

import (
	"testing"
	"time"

	"svc/platform/config"
	"svc/storage/memory"
)

// TestWebhookSettingsReachTheirOptions: each SVC_WEBHOOK_* setting reaches
// the change feed's webhook options (the behaviour each drives is shown
// by the tests settingEffects names).
func TestWebhookSettingsReachTheirOptions(t *testing.T) {
	env := map[string]string{"SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "SVC_WEBHOOK_TIMEOUT": "3s",
		"SVC_WEBHOOK_MAX_BATCH_EVENTS": "7", "SVC_WEBHOOK_BACKOFF_MAX": "42s", "SVC_WEBHOOK_FAILING_AFTER": "4"}
	cfg, err := config.Load(config.Source{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	st := &stores{Webhooks: memory.NewWebhooks()}
	o := webhookOptions(cfg, st)
	if !o.Net.AllowPrivate || o.Timeout != 3*time.Second || o.MaxEvents != 7 || o.BackoffMax != 42*time.Second ||
		o.FailingAfter != 4 || o.Store != st.Webhooks {
		t.Fatalf("webhook options %+v", o)
	}
	for k, v := range map[string]string{"SVC_WEBHOOK_TIMEOUT": "0s", "SVC_WEBHOOK_MAX_BATCH_EVENTS": "0",
		"SVC_WEBHOOK_BACKOFF_MAX": "10ms", "SVC_WEBHOOK_FAILING_AFTER": "0"} {
		_, err := config.Load(config.Source{Getenv: func(name string) (string, bool) {
			if name == k {
				return v, true
			}
			return "", false
		}})
		if err == nil {
			t.Errorf("%s=%s was accepted", k, v)
		}
	}
}
