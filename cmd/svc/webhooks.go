package main

import (
	"svc/changefeed"
	"svc/platform/config"
	"svc/platform/netguard"
)

// webhookOptions maps the SVC_WEBHOOK_* settings onto the change feed's
// webhook door (docs/decisions/0037-change-feed-webhooks.md).
func webhookOptions(cfg *config.Config, st *stores) changefeed.WebhookOptions {
	return changefeed.WebhookOptions{
		Store:        st.Webhooks,
		Net:          netguard.Options{AllowPrivate: cfg.WebhookAllowPrivateNetworks},
		Timeout:      cfg.WebhookTimeout,
		MaxEvents:    cfg.WebhookMaxBatchEvents,
		BackoffMax:   cfg.WebhookBackoffMax,
		FailingAfter: cfg.WebhookFailingAfter,
	}
}
