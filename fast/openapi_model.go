package fast

import (
	json "github.com/goccy/go-json"
)

// The typed model of svc's OpenAPI 3.1 document: the builder in
// openapi_spec.go fills these structs from the route table and the
// operation docs, and json.Marshal writes them. Members come out in field
// order; an omitted member is an empty optional field (omitempty); maps
// (paths, responses, properties, components) come out sorted by key, so
// the bytes are stable from build to build (TestOpenAPIGolden).

// Document is the OpenAPI object.
type Document struct {
	OpenAPI    string                `json:"openapi"`
	Info       Info                  `json:"info"`
	Servers    []DocServer           `json:"servers"`
	Tags       []Tag                 `json:"tags"`
	Security   []SecurityRequirement `json:"security"`
	Paths      map[string]*PathItem  `json:"paths"`
	Components Components            `json:"components"`
}

// Info is the document's info object.
type Info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
}

// DocServer is one entry of servers.
type DocServer struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// Tag is one entry of tags.
type Tag struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SecurityRequirement names security schemes and their scopes.
type SecurityRequirement map[string][]string

// PathItem holds a path's operations by method.
type PathItem struct {
	Get    *DocOperation `json:"get,omitempty"`
	Put    *DocOperation `json:"put,omitempty"`
	Post   *DocOperation `json:"post,omitempty"`
	Delete *DocOperation `json:"delete,omitempty"`
	Patch  *DocOperation `json:"patch,omitempty"`
	Head   *DocOperation `json:"head,omitempty"`
}

// set puts op under method (an HTTP method of the route table).
func (p *PathItem) set(method string, op *DocOperation) {
	switch method {
	case "GET":
		p.Get = op
	case "PUT":
		p.Put = op
	case "POST":
		p.Post = op
	case "DELETE":
		p.Delete = op
	case "PATCH":
		p.Patch = op
	case "HEAD":
		p.Head = op
	default:
		panic("openapi: no path item member for method " + method)
	}
}

// DocOperation is one operation object.
type DocOperation struct {
	OperationID string       `json:"operationId"`
	Tags        []string     `json:"tags"`
	Summary     string       `json:"summary"`
	Description string       `json:"description,omitempty"`
	Extension   bool         `json:"x-svc-extension,omitempty"`
	Parameters  []*Parameter `json:"parameters,omitempty"`
	RequestBody *RequestBody `json:"requestBody,omitempty"`
	// Security is nil to inherit the document's, or the operation's own
	// (an empty list: no authentication).
	Security  *[]SecurityRequirement `json:"security,omitempty"`
	Responses map[string]*Response   `json:"responses"`
}

// Parameter is a path, query or header parameter.
type Parameter struct {
	Name        string  `json:"name"`
	In          string  `json:"in"`
	Description string  `json:"description,omitempty"`
	Required    bool    `json:"required,omitempty"`
	Schema      *Schema `json:"schema"`
	Style       string  `json:"style,omitempty"`
	Explode     bool    `json:"explode,omitempty"`
	Extension   bool    `json:"x-svc-extension,omitempty"`
}

// RequestBody is an operation's body.
type RequestBody struct {
	Description string                `json:"description,omitempty"`
	Required    bool                  `json:"required"`
	Content     map[string]*MediaType `json:"content"`
}

// Response is a response object, or a reference to a shared one.
type Response struct {
	Ref         string                `json:"$ref,omitempty"`
	Description string                `json:"description,omitempty"`
	Headers     map[string]*Header    `json:"headers,omitempty"`
	Content     map[string]*MediaType `json:"content,omitempty"`
}

// MediaType is the schema (and an example, any JSON value) of one
// content type.
type MediaType struct {
	Schema  *Schema `json:"schema"`
	Example any     `json:"example,omitempty"`
}

// Header is a response header.
type Header struct {
	Description string  `json:"description,omitempty"`
	Schema      *Schema `json:"schema"`
}

// Components holds the shared parts.
type Components struct {
	SecuritySchemes map[string]*SecurityScheme `json:"securitySchemes"`
	Schemas         map[string]*Schema         `json:"schemas"`
	Responses       map[string]*Response       `json:"responses"`
}

// SecurityScheme is an HTTP authentication scheme.
type SecurityScheme struct {
	Type         string `json:"type"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat,omitempty"`
	Description  string `json:"description,omitempty"`
}

// Schema is a JSON Schema 2020-12 object, with the keywords svc's
// document uses.
type Schema struct {
	Ref         string     `json:"$ref,omitempty"`
	Type        SchemaType `json:"type,omitempty"`
	Format      string     `json:"format,omitempty"`
	Description string     `json:"description,omitempty"`
	Enum        []string   `json:"enum,omitempty"`
	// Const and Default hold any JSON value (nil: absent).
	Const                any            `json:"const,omitempty"`
	Default              any            `json:"default,omitempty"`
	Minimum              *int64         `json:"minimum,omitempty"`
	Maximum              *int64         `json:"maximum,omitempty"`
	MinLength            *int           `json:"minLength,omitempty"`
	MaxLength            *int           `json:"maxLength,omitempty"`
	Pattern              string         `json:"pattern,omitempty"`
	Items                *Schema        `json:"items,omitempty"`
	PrefixItems          []*Schema      `json:"prefixItems,omitempty"`
	MinItems             *int           `json:"minItems,omitempty"`
	MaxItems             *int           `json:"maxItems,omitempty"`
	Properties           Props          `json:"properties,omitempty"`
	Required             []string       `json:"required,omitempty"`
	AdditionalProperties *Additional    `json:"additionalProperties,omitempty"`
	PropertyNames        *Schema        `json:"propertyNames,omitempty"`
	OneOf                []*Schema      `json:"oneOf,omitempty"`
	Discriminator        *Discriminator `json:"discriminator,omitempty"`
	If                   *Schema        `json:"if,omitempty"`
	Then                 *Schema        `json:"then,omitempty"`
}

// Props are an object schema's properties by name.
type Props map[string]*Schema

// SchemaType is the type keyword: one type, or several (["string",
// "null"]).
type SchemaType []string

// MarshalJSON writes one type as a string and several as an array.
func (t SchemaType) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

// Additional is additionalProperties: true, false, or a schema.
type Additional struct {
	Allowed bool
	Schema  *Schema
}

// MarshalJSON writes the schema when there is one, else the boolean.
func (a *Additional) MarshalJSON() ([]byte, error) {
	if a.Schema != nil {
		return json.Marshal(a.Schema)
	}
	if a.Allowed {
		return []byte("true"), nil
	}
	return []byte("false"), nil
}

// Discriminator picks a oneOf alternative by a property's value.
type Discriminator struct {
	PropertyName string            `json:"propertyName"`
	Mapping      map[string]string `json:"mapping,omitempty"`
}

func ptr[T any](v T) *T { return &v }
