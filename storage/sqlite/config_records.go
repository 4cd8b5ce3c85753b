package sqlite

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"sort"
	"time"

	"svc/storage"
)

// SQLSchemas is the SQLite storage.SQLSchemas and storage.SQLRunner: it
// keeps each schema's configuration; SQL over it answers
// storage.ErrSQLNeedsPostgres (501 NOT_IMPLEMENTED_BY_BACKEND), as on the
// memory engine (docs/decisions/0031-sqlite-engine.md says why).
type SQLSchemas struct{ db *DB }

// SQLSchemas returns the SQL schema store of db.
func (db *DB) SQLSchemas() *SQLSchemas { return &SQLSchemas{db} }

func (s *SQLSchemas) GetSQLSchema(ctx context.Context, tenant, id string) (*storage.SQLSchema, error) {
	return getRecord[storage.SQLSchema](ctx, s.db, kindSQLSchema, tenantKey(tenant, id))
}

func (s *SQLSchemas) GetSQLSchemaByName(ctx context.Context, tenant, name string) (*storage.SQLSchema, error) {
	all, err := listRecords[storage.SQLSchema](ctx, s.db, kindSQLSchema, &tenant)
	if err != nil {
		return nil, err
	}
	for _, r := range all {
		if r.Name == name {
			return r, nil
		}
	}
	return nil, storage.ErrNotFound
}

func (s *SQLSchemas) ListSQLSchemas(ctx context.Context, tenant string) ([]*storage.SQLSchema, error) {
	out, err := listRecords[storage.SQLSchema](ctx, s.db, kindSQLSchema, &tenant)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *SQLSchemas) SaveSQLSchema(ctx context.Context, r *storage.SQLSchema, _ []storage.SQLView) error {
	id, created := r.ID, time.Now()
	err := s.db.w.write(ctx, func(w *wtx) error {
		all, err := wlistRecords[storage.SQLSchema](w, kindSQLSchema, &r.Tenant)
		if err != nil {
			return err
		}
		id, created = r.ID, time.Now()
		for _, old := range all {
			if old.Name == r.Name {
				id, created = old.ID, old.CreatedAt
			}
		}
		c := *r
		c.ID, c.CreatedAt, c.UpdatedAt = id, created, time.Now()
		return wputRecord(w, kindSQLSchema, tenantKey(r.Tenant, id), r.Tenant, &c)
	})
	if err != nil {
		return err
	}
	r.ID, r.CreatedAt, r.UpdatedAt = id, created, time.Now()
	return nil
}

func (s *SQLSchemas) DeleteSQLSchema(ctx context.Context, tenant, id string) error {
	return s.db.w.write(ctx, func(w *wtx) error { return wdelRecord(w, kindSQLSchema, tenantKey(tenant, id)) })
}

func (s *SQLSchemas) OpenSQL(context.Context, storage.SQLQuery) (storage.SQLCursor, error) {
	return nil, storage.ErrSQLNeedsPostgres
}

func (s *SQLSchemas) SQLCredentials(context.Context, string, string, bool) (storage.SQLLogin, error) {
	return storage.SQLLogin{}, storage.ErrSQLNeedsPostgres
}

// StreamConfigs is the SQLite storage.StreamConfigs.
type StreamConfigs struct{ db *DB }

// StreamConfigs returns the stream-data definition store of db.
func (db *DB) StreamConfigs() *StreamConfigs { return &StreamConfigs{db} }

func idKey(tenant string, id [16]byte) string { return tenantKey(tenant, hex.EncodeToString(id[:])) }

func (s *StreamConfigs) CreateStreamConfig(ctx context.Context, c *storage.StreamConfig) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		k := idKey(c.Tenant, c.ID)
		if _, err := wgetRecord[storage.StreamConfig](w, kindStreamConfig, k); err == nil {
			return storage.ErrExists
		} else if !errors.Is(err, errNotFound) {
			return err
		}
		return wputRecord(w, kindStreamConfig, k, c.Tenant, c)
	})
}

func (s *StreamConfigs) UpdateStreamConfig(ctx context.Context, c *storage.StreamConfig) error {
	return s.db.w.write(ctx, func(w *wtx) error {
		k := idKey(c.Tenant, c.ID)
		old, err := wgetRecord[storage.StreamConfig](w, kindStreamConfig, k)
		if err != nil {
			return err
		}
		n := *c
		n.Owner, n.CreatedAt = old.Owner, old.CreatedAt
		return wputRecord(w, kindStreamConfig, k, c.Tenant, &n)
	})
}

func (s *StreamConfigs) GetStreamConfig(ctx context.Context, tenant string, id [16]byte) (*storage.StreamConfig, error) {
	return getRecord[storage.StreamConfig](ctx, s.db, kindStreamConfig, idKey(tenant, id))
}

func (s *StreamConfigs) ListStreamConfigs(ctx context.Context, tenant string) ([]*storage.StreamConfig, error) {
	out, err := listRecords[storage.StreamConfig](ctx, s.db, kindStreamConfig, &tenant)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return bytes.Compare(out[i].ID[:], out[j].ID[:]) < 0
	})
	return out, nil
}

func (s *StreamConfigs) DeleteStreamConfig(ctx context.Context, tenant string, id [16]byte) error {
	return s.db.w.write(ctx, func(w *wtx) error { return wdelRecord(w, kindStreamConfig, idKey(tenant, id)) })
}

// StreamIndexes is the SQLite storage.StreamIndexes. Stream pages on
// SQLite are cut from a sorted search (as on memory), so an index is a
// declaration, ready at once, that changes what index/list and the query
// plan report.
type StreamIndexes struct{ db *DB }

// StreamIndexes returns the stream index store of db.
func (db *DB) StreamIndexes() *StreamIndexes { return &StreamIndexes{db} }

func (s *StreamIndexes) CreateStreamIndex(ctx context.Context, ix *storage.StreamIndex) error {
	err := s.db.w.write(ctx, func(w *wtx) error {
		all, err := wlistRecords[storage.StreamIndex](w, kindStreamIndex, &ix.Tenant)
		if err != nil {
			return err
		}
		for _, o := range all {
			if o.ID == ix.ID || (o.Model == ix.Model && o.Name == ix.Name) {
				return storage.ErrExists
			}
		}
		c := *ix
		c.Ready = true
		return wputRecord(w, kindStreamIndex, idKey(ix.Tenant, ix.ID), ix.Tenant, &c)
	})
	if err == nil {
		ix.Ready = true
	}
	return err
}

func (s *StreamIndexes) ListStreamIndexes(ctx context.Context, tenant string, model storage.ModelKey) ([]*storage.StreamIndex, error) {
	all, err := listRecords[storage.StreamIndex](ctx, s.db, kindStreamIndex, &tenant)
	if err != nil {
		return nil, err
	}
	out := []*storage.StreamIndex{}
	for _, ix := range all {
		if ix.Model == model {
			out = append(out, ix)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return bytes.Compare(out[i].ID[:], out[j].ID[:]) < 0
	})
	return out, nil
}

func (s *StreamIndexes) DropStreamIndex(ctx context.Context, tenant string, id [16]byte) error {
	return s.db.w.write(ctx, func(w *wtx) error { return wdelRecord(w, kindStreamIndex, idKey(tenant, id)) })
}
