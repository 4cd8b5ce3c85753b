// Package invalidate keeps every node's caches current in cluster mode
// (docs/ARCHITECTURE.md, cluster): a change made on one node reaches every
// node's caches through the cluster bus at once; the model cache lease and
// the auth reconcile loop stay as the safety net for a lost message.
//
// Two topics carry it. cluster.TopicModelInvalidate names a changed model
// (the other nodes drop their stored-record cache, decoded schema and
// compiled workflows of it); cluster.TopicAuthChanged names the kind of
// verification state that changed (the other nodes re-read it and purge
// their verified-token cache).
package invalidate

import (
	"context"
	"log/slog"
	"time"

	json "github.com/goccy/go-json"

	"svc/cluster"
	"svc/model"
	"svc/storage"
	"svc/workflow"
)

// modelChange is the payload of cluster.TopicModelInvalidate.
type modelChange struct {
	Node    string `json:"node"`
	Tenant  string `json:"tenant"`
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// Models broadcasts every model change this node makes and
// drops the other nodes' decoded schema and compiled workflows of it. The
// changing node has already updated its own copies, so it ignores its own
// message. storeForget, when not nil, drops the tenant's cached model
// records (modelcache.Cache on PostgreSQL) before the decoded copies go,
// so the next read sees the other node's write, not the lease's.
func Models(cl cluster.Cluster, models ModelService, sets *workflow.SetCache, storeForget func(tenant string), log *slog.Logger) (stop func()) {
	self := cl.Self().ID
	models.OnChange(func(tenant string, key storage.ModelKey) {
		b, _ := json.Marshal(modelChange{Node: self, Tenant: tenant, Name: key.Name, Version: key.Version})
		if err := cl.Publish(cluster.TopicModelInvalidate, b); err != nil {
			log.Warn("cluster: broadcasting a model change", "error", err)
		}
	})
	return cl.Subscribe(cluster.TopicModelInvalidate, func(p []byte) {
		var c modelChange
		if err := json.Unmarshal(p, &c); err != nil || c.Node == self {
			return
		}
		if storeForget != nil {
			storeForget(c.Tenant)
		}
		models.Forget(c.Tenant, storage.ModelKey{Name: c.Name, Version: c.Version})
		if sets != nil {
			sets.Forget(c.Tenant, c.Name, c.Version)
		}
	})
}

// ModelService is the node's model service as invalidation sees it
// (*model.Service).
type ModelService interface {
	// OnChange registers the hook told of every model change this node makes.
	OnChange(fn model.ChangeFunc)
	// Forget drops the node's decoded copy of a model.
	Forget(tenant string, key storage.ModelKey)
}

// Kinds of cluster.TopicAuthChanged.
const (
	authProviders = "providers"
	authTrusted   = "trusted"
	authKeypairs  = "keypairs"
	authClients   = "clients"
	authRevoked   = "revoked"
)

type authChange struct {
	Node string `json:"node"`
	Kind string `json:"kind"`
}

// authPublisher announces a stored change to the verification state.
type authPublisher struct {
	cl   cluster.Cluster
	self string
	log  *slog.Logger
}

func (a *authPublisher) changed(kind string) {
	if a == nil {
		return
	}
	b, _ := json.Marshal(authChange{Node: a.self, Kind: kind})
	if err := a.cl.Publish(cluster.TopicAuthChanged, b); err != nil {
		a.log.Warn("cluster: broadcasting an auth change", "kind", kind, "error", err)
	}
}

// AnnounceIAM wraps the IAM stores so each successful write announces
// itself on the bus. Wrapping the stores, not the services, catches every
// write path (API, bootstrap, reload stamps) in one place.
func AnnounceIAM(st storage.IAMStores, cl cluster.Cluster, log *slog.Logger) storage.IAMStores {
	p := &authPublisher{cl: cl, self: cl.Self().ID, log: log}
	if st.Clients != nil {
		st.Clients = clientsNotify{st.Clients, p}
	}
	if st.Keypairs != nil {
		st.Keypairs = keypairsNotify{st.Keypairs, p}
	}
	if st.TrustedKeys != nil {
		st.TrustedKeys = trustedNotify{st.TrustedKeys, p}
	}
	if st.Providers != nil {
		st.Providers = providersNotify{st.Providers, p}
	}
	if st.Revocations != nil {
		st.Revocations = revokedNotify{st.Revocations, p}
	}
	return st
}

// Refreshers are what a node re-reads on another node's auth change; nil
// members (mock mode) are skipped.
type Refreshers struct {
	Providers func(context.Context) error // OIDC providers (rediscovers changed ones)
	Trusted   func(context.Context) error // trusted keys
	Reconcile func(context.Context) error // keypairs, revocations and the externals
	Purge     func()                      // verified-token cache
}

// Auth applies other nodes' auth changes on this node, each within
// timeout; the returned function unsubscribes.
func Auth(cl cluster.Cluster, r Refreshers, timeout time.Duration, log *slog.Logger) (stop func()) {
	self := cl.Self().ID
	return cl.Subscribe(cluster.TopicAuthChanged, func(p []byte) {
		var c authChange
		if err := json.Unmarshal(p, &c); err != nil || c.Node == self {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var err error
		switch c.Kind {
		case authProviders:
			if r.Providers != nil {
				err = r.Providers(ctx)
			}
		case authTrusted:
			if r.Trusted != nil {
				err = r.Trusted(ctx)
			}
		case authKeypairs, authRevoked:
			if r.Reconcile != nil {
				err = r.Reconcile(ctx)
			}
		}
		// A change may revoke what a cached verification accepted.
		if r.Purge != nil {
			r.Purge()
		}
		if err != nil {
			log.Warn("cluster: applying another node's auth change; the reconcile loop retries", "kind", c.Kind, "error", err)
		}
	})
}

type clientsNotify struct {
	storage.M2MClients
	p *authPublisher
}

func (c clientsNotify) CreateClient(ctx context.Context, m *storage.M2MClient) error {
	err := c.M2MClients.CreateClient(ctx, m)
	if err == nil {
		c.p.changed(authClients)
	}
	return err
}

func (c clientsNotify) UpsertClient(ctx context.Context, m *storage.M2MClient) error {
	err := c.M2MClients.UpsertClient(ctx, m)
	if err == nil {
		c.p.changed(authClients)
	}
	return err
}

func (c clientsNotify) SetClientSecret(ctx context.Context, tenant, id string, hash []byte, at time.Time) (*storage.M2MClient, error) {
	m, err := c.M2MClients.SetClientSecret(ctx, tenant, id, hash, at)
	if err == nil {
		c.p.changed(authClients)
	}
	return m, err
}

func (c clientsNotify) DeleteClient(ctx context.Context, tenant, id string) error {
	err := c.M2MClients.DeleteClient(ctx, tenant, id)
	if err == nil {
		c.p.changed(authClients)
	}
	return err
}

type keypairsNotify struct {
	storage.Keypairs
	p *authPublisher
}

func (k keypairsNotify) CreateKeypair(ctx context.Context, kp *storage.Keypair, retireUntil *time.Time) error {
	err := k.Keypairs.CreateKeypair(ctx, kp, retireUntil)
	if err == nil {
		k.p.changed(authKeypairs)
	}
	return err
}

func (k keypairsNotify) UpdateKeypair(ctx context.Context, kid string, fn func(*storage.Keypair) error) (*storage.Keypair, error) {
	kp, err := k.Keypairs.UpdateKeypair(ctx, kid, fn)
	if err == nil {
		k.p.changed(authKeypairs)
	}
	return kp, err
}

func (k keypairsNotify) DeleteKeypair(ctx context.Context, kid string) error {
	err := k.Keypairs.DeleteKeypair(ctx, kid)
	if err == nil {
		k.p.changed(authKeypairs)
	}
	return err
}

type trustedNotify struct {
	storage.TrustedKeys
	p *authPublisher
}

func (t trustedNotify) PutTrustedKey(ctx context.Context, k *storage.TrustedKey, opt storage.TrustedKeyPut) error {
	err := t.TrustedKeys.PutTrustedKey(ctx, k, opt)
	if err == nil {
		t.p.changed(authTrusted)
	}
	return err
}

func (t trustedNotify) UpdateTrustedKey(ctx context.Context, tenant, kid string, fn func(k *storage.TrustedKey, others []*storage.TrustedKey) error) (*storage.TrustedKey, error) {
	k, err := t.TrustedKeys.UpdateTrustedKey(ctx, tenant, kid, fn)
	if err == nil {
		t.p.changed(authTrusted)
	}
	return k, err
}

func (t trustedNotify) DeleteTrustedKey(ctx context.Context, tenant, kid string) error {
	err := t.TrustedKeys.DeleteTrustedKey(ctx, tenant, kid)
	if err == nil {
		t.p.changed(authTrusted)
	}
	return err
}

type providersNotify struct {
	storage.OIDCProviders
	p *authPublisher
}

func (o providersNotify) CreateProvider(ctx context.Context, p *storage.OIDCProvider, check func(sameURI []*storage.OIDCProvider) error) error {
	err := o.OIDCProviders.CreateProvider(ctx, p, check)
	if err == nil {
		o.p.changed(authProviders)
	}
	return err
}

func (o providersNotify) UpdateProvider(ctx context.Context, tenant, id string, fn func(p *storage.OIDCProvider, sameURI []*storage.OIDCProvider) error) (*storage.OIDCProvider, error) {
	p, err := o.OIDCProviders.UpdateProvider(ctx, tenant, id, fn)
	if err == nil {
		o.p.changed(authProviders)
	}
	return p, err
}

func (o providersNotify) DeleteProvider(ctx context.Context, tenant, id string) error {
	err := o.OIDCProviders.DeleteProvider(ctx, tenant, id)
	if err == nil {
		o.p.changed(authProviders)
	}
	return err
}

type revokedNotify struct {
	storage.RevokedTokens
	p *authPublisher
}

func (r revokedNotify) RevokeToken(ctx context.Context, t *storage.RevokedToken) error {
	err := r.RevokedTokens.RevokeToken(ctx, t)
	if err == nil {
		r.p.changed(authRevoked)
	}
	return err
}
