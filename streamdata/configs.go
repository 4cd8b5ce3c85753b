package streamdata

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"

	"svc/platform/apierr"
	"svc/storage"
)

// Joda bean names of the wire form.
const (
	beanConfig    = "com.cyoda.core.streamdata.StreamDataConfigDef"
	beanContainer = "com.cyoda.core.streamdata.StreamDataConfigDefContainer"
)

func configNotFound(id [16]byte) error {
	return apierr.New(apierr.NotFound, "stream data config "+uuid.UUID(id).String()+" not found",
		apierr.P("configId", uuid.UUID(id).String()))
}

// configDoc is a StreamDataConfigDef as submitted.
type configDoc struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Owner       string          `json:"owner"`
	CreateDate  json.RawMessage `json:"createDate"`
	Def         json.RawMessage `json:"streamDataDef"`
}

// parseConfig reads a StreamDataConfigDef and checks its definition.
func parseConfig(raw []byte) (*configDoc, *Def, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil, badDef("the body must be a StreamDataConfigDef object")
	}
	var c configDoc
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, nil, badDef("the body does not parse: " + err.Error())
	}
	d, err := ParseDef(c.Def)
	if err != nil {
		return nil, nil, err
	}
	if err := Check(d); err != nil {
		return nil, nil, err
	}
	c.Def = append(json.RawMessage(nil), bytes.TrimSpace(c.Def)...)
	return &c, d, nil
}

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
func (s *Service) SaveConfig(ctx context.Context, p Principal, body []byte) ([16]byte, error) {
	c, d, err := parseConfig(body)
	if err != nil {
		return [16]byte{}, err
	}
	id, err := uuid.NewUUID()
	if err != nil {
		return [16]byte{}, err
	}
	sc := &storage.StreamConfig{Tenant: p.Tenant, ID: id, Name: c.Name, Description: c.Description, Owner: p.User,
		RequestClass: d.RequestClass, CreatedAt: s.now().UTC(), Def: c.Def}
	if err := s.configs.CreateStreamConfig(ctx, sc); err != nil {
		return [16]byte{}, err
	}
	return id, nil
}

// UpdateConfig replaces a definition; the id comes from the body, else
// from the configId parameter.
func (s *Service) UpdateConfig(ctx context.Context, p Principal, body []byte, paramID string) error {
	c, d, err := parseConfig(body)
	if err != nil {
		return err
	}
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
		Description: c.Description, RequestClass: d.RequestClass, Def: c.Def})
	if errors.Is(err, storage.ErrNotFound) {
		return configNotFound(id)
	}
	return err
}

// GetConfig renders one definition.
func (s *Service) GetConfig(ctx context.Context, tenant, rawID string) ([]byte, error) {
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
	return appendConfig(nil, c), nil
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

// ListConfigs renders every definition of the tenant as a plain array, by
// creation date.
func (s *Service) ListConfigs(ctx context.Context, tenant string) ([]byte, error) {
	cs, err := s.configs.ListStreamConfigs(ctx, tenant)
	if err != nil {
		return nil, err
	}
	b := []byte{'['}
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendConfig(b, c)
	}
	return append(b, ']'), nil
}

// Export selects what export-all (class "" and ids nil), export-by-class
// and export-by-ids return.
type Export struct {
	Class string
	IDs   []string
}

// ExportConfigs renders a StreamDataConfigDefContainer in the form both
// reference UIs read: data.value is the array.
func (s *Service) ExportConfigs(ctx context.Context, tenant string, x Export) ([]byte, error) {
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
	b := []byte(`{"@bean":"` + beanContainer + `","data":{"@meta":"` + beanConfig + `[]","value":[`)
	n := 0
	for _, c := range cs {
		if (want != nil && !want[c.ID]) || (x.Class != "" && c.RequestClass != x.Class) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendConfig(b, c)
	}
	return append(b, "]}}"...), nil
}

// ImportConfigs stores the definitions of a container: data as a plain
// array or as the Joda {"@meta", "value"} wrapper. An id the tenant has is
// skipped, or with failOnExists the whole import is refused (409) before
// anything is written. A definition without an id gets a new one.
func (s *Service) ImportConfigs(ctx context.Context, p Principal, body []byte, failOnExists bool) error {
	top, err := object(body, "container")
	if err != nil {
		return err
	}
	if top == nil {
		return badDef("the body must be a StreamDataConfigDefContainer", apierr.P("field", "data"))
	}
	list, err := items(top["data"], "data")
	if err != nil {
		return err
	}
	var out []*storage.StreamConfig
	for _, raw := range list {
		c, d, err := parseConfig(raw)
		if err != nil {
			return err
		}
		sc := &storage.StreamConfig{Tenant: p.Tenant, Name: c.Name, Description: c.Description, Owner: c.Owner,
			RequestClass: d.RequestClass, CreatedAt: s.now().UTC(), Def: c.Def}
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
		if t, ok := parseDate(c.CreateDate); ok {
			sc.CreatedAt = t
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

// parseDate reads a createDate as an ISO instant or epoch milliseconds.
func parseDate(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !storage.InstantInRange(t) {
			return time.Time{}, false
		}
		return t.UTC(), true
	}
	ms, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || !storage.InstantInRange(time.UnixMilli(ms)) {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

func appendConfig(b []byte, c *storage.StreamConfig) []byte {
	b = append(b, `{"@bean":"`+beanConfig+`","id":"`...)
	b = append(b, uuid.UUID(c.ID).String()...)
	b = append(b, `","name":`...)
	b = appendValue(b, c.Name)
	b = append(b, `,"description":`...)
	b = appendValue(b, c.Description)
	b = append(b, `,"owner":`...)
	b = appendValue(b, c.Owner)
	b = append(b, `,"createDate":"`...)
	b = append(b, c.CreatedAt.UTC().Format(timeLayout)...)
	b = append(b, `","streamDataDef":`...)
	if len(c.Def) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, c.Def...)
	}
	return append(b, '}')
}
