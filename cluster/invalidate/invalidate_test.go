package invalidate

import (
	"context"
	"encoding/json"
	"errors"
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
	st := AnnounceIAM(memory.NewIAMStores(), cl, log)
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
	stop := Models(cl, models, nil, nil, log)
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

// fakeModels records what invalidation asks of a node's model service.
type fakeModels struct {
	forgot chan storage.ModelKey
}

func (f *fakeModels) OnChange(model.ChangeFunc) {}

func (f *fakeModels) Forget(tenant string, key storage.ModelKey) {
	f.forgot <- storage.ModelKey{Name: tenant + "/" + key.Name, Version: key.Version}
}

// TestModelsAppliesOtherNodesChange: a model change announced by another
// node drops the stored-record cache of its tenant and then the decoded
// model; this node's own announcement and an undecodable one are ignored.
func TestModelsAppliesOtherNodesChange(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	cl := cluster.NewLocal(cluster.Node{ID: "n1"}, log)
	defer cl.Close()
	fm := &fakeModels{forgot: make(chan storage.ModelKey, 4)}
	storeForgot := make(chan string, 4)
	stop := Models(cl, fm, nil, func(tenant string) { storeForgot <- tenant }, log)
	defer stop()

	publish := func(p []byte) {
		t.Helper()
		if err := cl.Publish(cluster.TopicModelInvalidate, p); err != nil {
			t.Fatal(err)
		}
	}
	own, _ := json.Marshal(modelChange{Node: "n1", Tenant: "mine", Name: "m", Version: 1})
	publish(own)
	publish([]byte(`{"node":`))
	other, _ := json.Marshal(modelChange{Node: "n2", Tenant: "t", Name: "orders", Version: 2})
	publish(other)

	// The bus delivers in order, so the first effect seen is the other
	// node's: the own and the broken message changed nothing.
	select {
	case tenant := <-storeForgot:
		if tenant != "t" {
			t.Fatalf("store cache forgot tenant %q, want t", tenant)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("store cache not told")
	}
	select {
	case k := <-fm.forgot:
		if k != (storage.ModelKey{Name: "t/orders", Version: 2}) {
			t.Fatalf("model service forgot %+v", k)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("model service not told")
	}
	// Unsubscribed: a later change reaches nobody. A marker published after
	// it on the same topic shows when the bus has delivered it.
	stop()
	marker := []byte(`"marker"`)
	done := make(chan struct{})
	cancel := cl.Subscribe(cluster.TopicModelInvalidate, func(p []byte) {
		if string(p) == string(marker) {
			close(done)
		}
	})
	defer cancel()
	publish(other)
	publish(marker)
	<-done
	if len(storeForgot) != 0 || len(fm.forgot) != 0 {
		t.Fatal("a change after stop was applied")
	}
}

// TestAuthRefreshesByKind: each kind of another node's auth change re-reads
// what it names and always purges the verified-token cache, also when the
// re-read fails; this node's own change is ignored.
func TestAuthRefreshesByKind(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	cl := cluster.NewLocal(cluster.Node{ID: "n1"}, log)
	defer cl.Close()
	calls := make(chan string, 16)
	rec := func(name string, err error) func(context.Context) error {
		return func(ctx context.Context) error {
			if _, ok := ctx.Deadline(); !ok {
				t.Errorf("%s: refresh without a deadline", name)
			}
			calls <- name
			return err
		}
	}
	stop := Auth(cl, Refreshers{
		Providers: rec("providers", nil),
		Trusted:   rec("trusted", nil),
		Reconcile: rec("reconcile", errors.New("database away")),
		Purge:     func() { calls <- "purge" },
	}, time.Minute, log)
	defer stop()

	for _, tc := range []struct {
		node, kind string
		want       []string
	}{
		{"n1", authProviders, nil}, // own change: nothing (seen as the next case's calls coming first)
		{"n2", authProviders, []string{"providers", "purge"}},
		{"n2", authTrusted, []string{"trusted", "purge"}},
		{"n2", authKeypairs, []string{"reconcile", "purge"}},
		{"n2", authRevoked, []string{"reconcile", "purge"}},
		{"n2", authClients, []string{"purge"}},
	} {
		b, _ := json.Marshal(authChange{Node: tc.node, Kind: tc.kind})
		if err := cl.Publish(cluster.TopicAuthChanged, b); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			select {
			case got := <-calls:
				if got != w {
					t.Fatalf("%s from %s: call %q, want %q", tc.kind, tc.node, got, w)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("%s from %s: no %s", tc.kind, tc.node, w)
			}
		}
	}
}
