package streamdata

import (
	"context"
	"errors"
	"strconv"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
)

func configNotFound(id [16]byte) error {
	return apierr.New(apierr.NotFound, "stream data config "+uuid.UUID(id).String()+" not found",
		apierr.P("configId", uuid.UUID(id).String()))
}

// Config is a StreamDataConfigDef as a client sends it, decoded by the
// adapter: its definition parsed and checked (ParseDef, Check) and kept as
// the bytes that are stored and returned.
type Config struct {
	// ID is the id as sent ("" when absent); the service checks it.
	ID          string
	Name        string
	Description string
	// Owner is the owner an import carries; a save records the caller.
	Owner string
	// CreatedAt is an import's createDate; zero means now.
	CreatedAt time.Time
	Def       *Def
	DefJSON   json.RawMessage
}

// ParseID reads a UUID parameter or member named what (400 naming it).
func ParseID(s, what string) ([16]byte, error) { return parseID(s, what) }

func parseID(s, what string) ([16]byte, error) {
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return [16]byte{}, apierr.New(apierr.BadRequest, what+" "+strconv.Quote(s)+" is not a UUID", apierr.P("parameter", what))
	}
	return id, nil
}

// Principal is who calls: the tenant and the user name recorded as owner.
type Principal struct {
	Tenant string
	// User names the owner of saved configs (the user name, else the id).
	User string
	// UserID and Kind attribute the entity deletes of stream delete in
	// the change history, as every other write is (docs/decisions/0014-entities.md).
	UserID, Kind string
}

// SaveConfig stores a new definition under a new time-based id.
func (s *Service) SaveConfig(ctx context.Context, p Principal, c *Config) ([16]byte, error) {
	id, err := uuid.NewUUID()
	if err != nil {
		return [16]byte{}, err
	}
	sc := &storage.StreamConfig{Tenant: p.Tenant, ID: id, Name: c.Name, Description: c.Description, Owner: p.User,
		RequestClass: c.Def.RequestClass, CreatedAt: s.now().UTC(), Def: c.DefJSON}
	if err := s.configs.CreateStreamConfig(ctx, sc); err != nil {
		return [16]byte{}, err
	}
	return id, nil
}

// UpdateConfig replaces a definition; the id comes from the body, else
// from the configId parameter.
func (s *Service) UpdateConfig(ctx context.Context, p Principal, c *Config, paramID string) error {
	raw := c.ID
	if raw == "" {
		raw = paramID
	}
	if raw == "" {
		return apierr.New(apierr.BadRequest, "the config id is missing: give it in the body or as configId", apierr.P("parameter", "configId"))
	}
	id, err := parseID(raw, "configId")
	if err != nil {
		return err
	}
	err = s.configs.UpdateStreamConfig(ctx, &storage.StreamConfig{Tenant: p.Tenant, ID: id, Name: c.Name,
		Description: c.Description, RequestClass: c.Def.RequestClass, Def: c.DefJSON})
	if errors.Is(err, storage.ErrNotFound) {
		return configNotFound(id)
	}
	return err
}

// GetConfig reads one definition.
func (s *Service) GetConfig(ctx context.Context, tenant, rawID string) (*storage.StreamConfig, error) {
	id, err := parseID(rawID, "configId")
	if err != nil {
		return nil, err
	}
	c, err := s.configs.GetStreamConfig(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, configNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// DeleteConfig removes one definition.
func (s *Service) DeleteConfig(ctx context.Context, tenant, rawID string) error {
	id, err := parseID(rawID, "configId")
	if err != nil {
		return err
	}
	err = s.configs.DeleteStreamConfig(ctx, tenant, id)
	if errors.Is(err, storage.ErrNotFound) {
		return configNotFound(id)
	}
	return err
}

// ListConfigs reads every definition of the tenant, by creation date.
func (s *Service) ListConfigs(ctx context.Context, tenant string) ([]*storage.StreamConfig, error) {
	return s.configs.ListStreamConfigs(ctx, tenant)
}

// Export selects what export-all (class "" and ids nil), export-by-class
// and export-by-ids return.
type Export struct {
	Class string
	IDs   []string
}

// ExportConfigs selects the definitions of a StreamDataConfigDefContainer,
// by creation date.
func (s *Service) ExportConfigs(ctx context.Context, tenant string, x Export) ([]*storage.StreamConfig, error) {
	var want map[[16]byte]bool
	if x.IDs != nil {
		want = map[[16]byte]bool{}
		for _, raw := range x.IDs {
			id, err := parseID(raw, "includeIds")
			if err != nil {
				return nil, err
			}
			want[id] = true
		}
	}
	cs, err := s.configs.ListStreamConfigs(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := []*storage.StreamConfig{}
	for _, c := range cs {
		if (want != nil && !want[c.ID]) || (x.Class != "" && c.RequestClass != x.Class) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// ImportConfigs stores the definitions of a container. An id the tenant
// has is skipped, or with failOnExists the whole import is refused (409)
// before anything is written. A definition without an id gets a new one,
// without an owner the caller's, without a createDate now.
func (s *Service) ImportConfigs(ctx context.Context, p Principal, list []*Config, failOnExists bool) error {
	var out []*storage.StreamConfig
	var err error
	for _, c := range list {
		sc := &storage.StreamConfig{Tenant: p.Tenant, Name: c.Name, Description: c.Description, Owner: c.Owner,
			RequestClass: c.Def.RequestClass, CreatedAt: s.now().UTC(), Def: c.DefJSON}
		if c.ID != "" {
			if sc.ID, err = parseID(c.ID, "id"); err != nil {
				return err
			}
		} else if sc.ID, err = uuid.NewUUID(); err != nil {
			return err
		}
		if sc.Owner == "" {
			sc.Owner = p.User
		}
		if !c.CreatedAt.IsZero() {
			sc.CreatedAt = c.CreatedAt
		}
		out = append(out, sc)
	}
	if failOnExists {
		for _, c := range out {
			_, err := s.configs.GetStreamConfig(ctx, p.Tenant, c.ID)
			if err == nil {
				return apierr.New(apierr.Conflict, "stream data config "+uuid.UUID(c.ID).String()+" already exists",
					apierr.P("configId", uuid.UUID(c.ID).String()))
			}
			if !errors.Is(err, storage.ErrNotFound) {
				return err
			}
		}
	}
	for _, c := range out {
		err := s.configs.CreateStreamConfig(ctx, c)
		if errors.Is(err, storage.ErrExists) {
			if failOnExists {
				return apierr.New(apierr.Conflict, "stream data config "+uuid.UUID(c.ID).String()+" already exists",
					apierr.P("configId", uuid.UUID(c.ID).String()))
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}
