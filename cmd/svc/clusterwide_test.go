package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"svc/cluster"
	"svc/model"
	"svc/storage"
	"svc/storage/memory"
)

// recvKind waits for the next auth.changed kind on ch, or "" after a
// generous bound.
func recvKind(t *testing.T, ch <-chan authChange) authChange {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(60 * time.Second):
		t.Fatal("no auth.changed message")
		return authChange{}
	}
}

// TestAnnounceIAMPublishesEachStoredChange: every successful write to the
// IAM stores announces its kind on the bus with this node's id; a refused
// write announces nothing.
func TestAnnounceIAMPublishesEachStoredChange(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	cl := cluster.NewLocal(cluster.Node{ID: "n1"}, log)
	defer cl.Close()
	got := make(chan authChange, 16)
	cancel := cl.Subscribe(cluster.TopicAuthChanged, func(p []byte) {
		var c authChange
		if err := json.Unmarshal(p, &c); err != nil {
			t.Error(err)
		}
		got <- c
	})
	defer cancel()
	st := announceIAM(memory.NewIAMStores(), cl, log)
	ctx := context.Background()
	now := time.Now()

	if err := st.Clients.CreateClient(ctx, &storage.M2MClient{ClientID: "c1", Tenant: "t", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if c := recvKind(t, got); c.Kind != authClients || c.Node != "n1" {
		t.Fatalf("create client announced %+v", c)
	}
	// The same id again is refused by the store: nothing announced.
	if err := st.Clients.CreateClient(ctx, &storage.M2MClient{ClientID: "c1", Tenant: "t"}); err == nil {
		t.Fatal("duplicate client accepted")
	}
	if err := st.Clients.DeleteClient(ctx, "t", "c1"); err != nil {
		t.Fatal(err)
	}
	if c := recvKind(t, got); c.Kind != authClients {
		t.Fatalf("after a refused create and a delete: %+v (the refused write announced itself)", c)
	}
	if err := st.Keypairs.CreateKeypair(ctx, &storage.Keypair{KID: "k1", Audience: "client", Algorithm: "RS256", Active: true,
		ValidFrom: now, ValidTo: now.Add(time.Hour)}, nil); err != nil {
		t.Fatal(err)
	}
	if c := recvKind(t, got); c.Kind != authKeypairs {
		t.Fatalf("keypair: %+v", c)
	}
	if err := st.TrustedKeys.PutTrustedKey(ctx, &storage.TrustedKey{KID: "tk", Tenant: "t", JWK: []byte(`{}`), Active: true,
		ValidFrom: now, ValidTo: now.Add(time.Hour)}, storage.TrustedKeyPut{}); err != nil {
		t.Fatal(err)
	}
	if c := recvKind(t, got); c.Kind != authTrusted {
		t.Fatalf("trusted key: %+v", c)
	}
	if err := st.Providers.CreateProvider(ctx, &storage.OIDCProvider{ID: "p1", Tenant: "t", WellKnownURI: "https://idp.test/.well-known/openid-configuration",
		CreatedAt: now, UpdatedAt: now}, func([]*storage.OIDCProvider) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if c := recvKind(t, got); c.Kind != authProviders {
		t.Fatalf("provider: %+v", c)
	}
	if err := st.Revocations.RevokeToken(ctx, &storage.RevokedToken{JTI: "j1", Until: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if c := recvKind(t, got); c.Kind != authRevoked {
		t.Fatalf("revocation: %+v", c)
	}
}

// TestModelChangesAnnounced: each model change (import, lock) on a node
// is announced with the node's id and the model's key. (That another node
// then serves the change at once is TestClusterLockOnOneNodeSeenByTheNextWriteOnAnother.)
func TestModelChangesAnnounced(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	cl := cluster.NewLocal(cluster.Node{ID: "n1"}, log)
	defer cl.Close()
	models := model.New(memory.NewModels(), nil)
	stop := wireModelInvalidation(cl, models, nil, log)
	defer stop()
	got := make(chan modelChange, 4)
	cancel := cl.Subscribe(cluster.TopicModelInvalidate, func(p []byte) {
		var c modelChange
		json.Unmarshal(p, &c)
		got <- c
	})
	defer cancel()
	ctx := context.Background()
	if _, err := models.Import(ctx, "t", storage.ModelKey{Name: "m", Version: 3}, "JSON", "SAMPLE_DATA", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := models.Lock(ctx, "t", storage.ModelKey{Name: "m", Version: 3}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case c := <-got:
			if c != (modelChange{Node: "n1", Tenant: "t", Name: "m", Version: 3}) {
				t.Fatalf("notice %+v", c)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no model.invalidate notice")
		}
	}
}
