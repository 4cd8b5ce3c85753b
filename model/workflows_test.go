package model

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	json "github.com/goccy/go-json"

	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
	"svc/workflow/workflowtest"
)

// racingModels makes the first n PutModel calls lose a revision race: a
// concurrent writer (here: a direct write of the unlock state) moves the
// stored revision on just before the write lands.
type racingModels struct {
	storage.Models
	races atomic.Int32
}

func (r *racingModels) PutModel(ctx context.Context, m *storage.Model) error {
	if r.races.Add(-1) >= 0 {
		cur, err := r.Models.GetModel(ctx, m.Tenant, m.Key)
		if err != nil {
			return err
		}
		cur.ChangeLevel = "TYPE" // the concurrent writer's change
		if err := r.Models.PutModel(ctx, cur); err != nil {
			return err
		}
	}
	return r.Models.PutModel(ctx, m)
}

const wfBody = `{"workflows":[{"version":"1.3","name":"w","initialState":"NEW","states":{"NEW":{}}}]}`

func TestImportWorkflowsRetriesARevisionRace(t *testing.T) {
	store := &racingModels{Models: memory.NewModels()}
	key := storage.ModelKey{Name: "m", Version: 1}
	if err := store.Models.PutModel(t.Context(), &storage.Model{Tenant: "A", Key: key, State: Unlocked, Schema: []byte(`{"$":{}}`)}); err != nil {
		t.Fatal(err)
	}
	svc := New(store, nil, WithMaxRetries(3))
	store.races.Store(2)
	if err := svc.ImportWorkflows(t.Context(), "A", key, workflowtest.ParseImport(t, wfBody), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("import after two lost races: %v", err)
	}
	m, err := store.GetModel(t.Context(), "A", key)
	if err != nil {
		t.Fatal(err)
	}
	// Both writers' changes are kept: the import re-read the model.
	if !strings.Contains(string(m.Workflows), `"name":"w"`) || m.ChangeLevel != "TYPE" {
		t.Fatalf("after the retried import: workflows %s change level %q", m.Workflows, m.ChangeLevel)
	}

	// More lost races than retries: the conflict surfaces (409 CONFLICT).
	store.races.Store(10)
	err = svc.ImportWorkflows(t.Context(), "A", key, workflowtest.ParseImport(t, wfBody), nil)
	if !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("import losing every race: %v, want ErrConflict", err)
	}
}

func TestExportWorkflowsStampsCurrentVersion(t *testing.T) {
	store := memory.NewModels()
	key := storage.ModelKey{Name: "m", Version: 1}
	if err := store.PutModel(t.Context(), &storage.Model{Tenant: "A", Key: key, State: Locked}); err != nil {
		t.Fatal(err)
	}
	svc := New(store, nil)
	if _, err := svc.ExportWorkflows(t.Context(), "A", key); err == nil {
		t.Fatal("export of a model without workflows succeeded")
	} else if e, ok := apierr.As(err); !ok || e.Code.String() != "WORKFLOW_NOT_FOUND" {
		t.Fatalf("export without workflows: %v", err)
	}
	// Import needs no unlocked model either.
	if err := svc.ImportWorkflows(t.Context(), "A", key, workflowtest.ParseImport(t, strings.Replace(wfBody, "1.3", "1.1", 1)), nil); err != nil {
		t.Fatal(err)
	}
	res, err := svc.ExportWorkflows(t.Context(), "A", key)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), `{"entityName":"m","modelVersion":1,"workflows":[{"version":"1.3","name":"w"`) {
		t.Fatalf("export: %s", out)
	}
	if _, err := svc.ExportWorkflows(t.Context(), "B", key); err == nil {
		t.Fatal("tenant B exported A's workflows")
	} else if e, ok := apierr.As(err); !ok || e.Code != apierr.ModelNotFound {
		t.Fatalf("tenant B: %v", err)
	}
}
