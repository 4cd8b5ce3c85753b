package config

import "time"

// validateWebhooks checks the change-feed webhook settings.
func (c *Config) validateWebhooks() *Error {
	if c.WebhookTimeout <= 0 || c.WebhookTimeout > 5*time.Minute {
		return errf("SVC_WEBHOOK_TIMEOUT", "must be above 0 and at most 5m, got %s", c.WebhookTimeout)
	}
	if c.WebhookMaxBatchEvents < 1 || c.WebhookMaxBatchEvents > 10000 {
		return errf("SVC_WEBHOOK_MAX_BATCH_EVENTS", "must be 1 to 10000, got %d", c.WebhookMaxBatchEvents)
	}
	if c.WebhookBackoffMax < time.Second {
		return errf("SVC_WEBHOOK_BACKOFF_MAX", "must be at least 1s, got %s", c.WebhookBackoffMax)
	}
	if c.WebhookFailingAfter < 1 {
		return errf("SVC_WEBHOOK_FAILING_AFTER", "must be at least 1, got %d", c.WebhookFailingAfter)
	}
	return nil
}
