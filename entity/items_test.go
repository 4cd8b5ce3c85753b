package entity_test

import (
	"context"
	"strings"
	"testing"

	"svc/entity"
	"svc/model"
	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
)

// TestCreateEntities: items of several models commit in one transaction;
// any bad item fails the whole request, named by its index, with nothing
// written.
func TestCreateEntities(t *testing.T) {
	ctx := context.Background()
	ms, es := memory.NewModels(), memory.NewEntities()
	msvc := model.New(ms, nil)
	svc := entity.New(es, ms, entity.GateOf(msvc))
	msvc.SetEntityCounter(svc)
	a, b, u := storage.ModelKey{Name: "a", Version: 1}, storage.ModelKey{Name: "b", Version: 1}, storage.ModelKey{Name: "u", Version: 1}
	for _, k := range []storage.ModelKey{a, b, u} {
		if _, err := msvc.Import(ctx, "t", k, model.FormatJSON, model.ConvSampleData, []byte(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []storage.ModelKey{a, b} {
		if _, err := msvc.Lock(ctx, "t", k); err != nil {
			t.Fatal(err)
		}
	}
	actor := entity.Actor{Tenant: "t", User: "u1"}
	doc := []byte(`{"n":2}`)
	for name, tc := range map[string]struct {
		items []entity.NewEntity
		code  string
		msg   string
	}{
		"empty":        {nil, apierr.BadRequest.String(), "collection is empty"},
		"unlocked":     {[]entity.NewEntity{{a, doc}, {u, doc}}, apierr.ModelNotLocked.String(), "item 1: "},
		"missing":      {[]entity.NewEntity{{a, doc}, {storage.ModelKey{Name: "zz", Version: 1}, doc}}, apierr.ModelNotFound.String(), "item 1: "},
		"not object":   {[]entity.NewEntity{{a, doc}, {b, doc}, {a, []byte(`[1]`)}}, apierr.BadRequest.String(), "item 2: data must be a JSON object"},
		"no model":     {[]entity.NewEntity{{storage.ModelKey{}, doc}}, apierr.BadRequest.String(), "item 0: missing model"},
		"wrong schema": {[]entity.NewEntity{{a, doc}, {a, []byte(`{"n":"text"}`)}}, "", "item 1: "},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := svc.CreateEntities(ctx, actor, tc.items)
			e, ok := apierr.As(err)
			if !ok || (tc.code != "" && e.Code.String() != tc.code) || !strings.HasPrefix(e.Message, tc.msg) {
				t.Fatalf("got %v, want %s %q…", err, tc.code, tc.msg)
			}
		})
	}
	if n, _ := es.Count(ctx, "t", a); n != 0 {
		t.Fatalf("failed requests wrote %d entities", n)
	}

	ch, err := svc.CreateEntities(ctx, actor, []entity.NewEntity{{a, doc}, {b, []byte(` {"n":3} `)}, {a, doc}})
	if err != nil || len(ch.IDs) != 3 {
		t.Fatalf("create: %v %+v", err, ch)
	}
	for _, id := range ch.IDs {
		e, err := svc.Get(ctx, "t", id, nil, nil)
		if err != nil || e.TxID != ch.TxID || e.State != entity.StateCreated {
			t.Fatalf("entity %x: %v %+v", id, err, e)
		}
	}
	if n, _ := es.Count(ctx, "t", a); n != 2 {
		t.Fatalf("model a has %d entities", n)
	}
}
