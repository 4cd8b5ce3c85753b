package sqlschema

import (
	"context"
	"net/http"
	"testing"
	"time"

	"svc/platform/apierr"
	"svc/storage"
	"svc/storage/memory"
)

// refusingStore is a schema store whose engine cannot give a schema its
// own database.
type refusingStore struct {
	*memory.SQLSchemas
	err error
}

func (r refusingStore) SaveSQLSchema(context.Context, *storage.SQLSchema, []storage.SQLView) error {
	return r.err
}

// TestSaveRefusedByEngineIs503: when the engine cannot make the schema's
// own database (no CREATEDB, no postgres_fdw), saving answers 503
// SQL_DATABASE_UNAVAILABLE naming what is needed, never a 500; the
// rights refusal stays 503 SQL_ROLE_RIGHTS_NOT_REVOKED.
func TestSaveRefusedByEngineIs503(t *testing.T) {
	base := fuzzService(t)
	for _, tc := range []struct {
		err  error
		code apierr.Code
		prop string
	}{
		{&storage.SQLDatabaseError{Need: "CREATEDB", Detail: "permission denied to create database"}, apierr.SQLDatabaseUnavailable, "need"},
		{&storage.SQLRightsError{Left: []string{"CONNECT ON DATABASE svc"}, Migrations: []string{"m.sql"}}, apierr.SQLRoleRightsNotRevoked, "left"},
	} {
		st := refusingStore{SQLSchemas: memory.NewSQLSchemas(), err: tc.err}
		s := New(st, base.models, st, base.modelID, time.Second)
		_, err := s.PutDefault(context.Background(), "T", "shop")
		e, ok := apierr.As(err)
		if !ok || e.Code != tc.code || e.Code.HTTPStatus() != http.StatusServiceUnavailable {
			t.Fatalf("%T: %v, want %v (503)", tc.err, err, tc.code)
		}
		found := false
		for _, p := range e.Props {
			found = found || p.Key == tc.prop
		}
		if !found {
			t.Errorf("%v: no property %q: %v", tc.code, tc.prop, e.Props)
		}
	}
}
