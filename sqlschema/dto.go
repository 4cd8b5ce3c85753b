package sqlschema

// Field categories of FieldConfig.
const (
	CatSpecial = "SPECIAL"
	CatRoot    = "ROOT"
	CatIndex   = "INDEX"
	CatData    = "DATA"
)

// Keys of the SPECIAL and ROOT fields.
const (
	KeyEntityID   = "ENTITY_ID"
	KeyPointTime  = "POINT_TIME"
	KeyJSON       = "JSON"
	KeyCreation   = "creationDate"
	KeyLastUpdate = "lastUpdateTime"
	KeyState      = "state"
)

// PathJSON is the uniformedPath of the whole-document table.
const PathJSON = "json"

// SchemaConfig is SchemaConfigDto.
type SchemaConfig struct {
	ID         string        `json:"id,omitempty"`
	SchemaName string        `json:"schemaName"`
	Tables     []TableConfig `json:"tables"`
}

// TableConfig is TableConfigDto: one SQL table over one node of one model.
type TableConfig struct {
	TableName       string        `json:"tableName"`
	MetadataClassID string        `json:"metadataClassId"`
	UniformedPath   string        `json:"uniformedPath"`
	Fields          []FieldConfig `json:"fields"`
	Hidden          bool          `json:"hidden"`
	ModelUpdateDate int64         `json:"modelUpdateDate,omitempty"`
}

// FieldConfig is FieldConfigDto. hidden and isArray are always written;
// flatten and arrayFields only for arrays (docs/decisions/0024-sql-schema.md).
type FieldConfig struct {
	FieldName     string        `json:"fieldName"`
	FieldKey      string        `json:"fieldKey"`
	FieldCategory string        `json:"fieldCategory"`
	DataType      string        `json:"dataType"`
	IsArray       bool          `json:"isArray"`
	Hidden        bool          `json:"hidden"`
	Flatten       *bool         `json:"flatten,omitempty"`
	ArrayFields   []FieldConfig `json:"arrayFields,omitempty"`
}

// DataTypes is the connector's DataType enum: the only dataType names a
// saved field may carry.
var DataTypes = []string{"STRING", "BYTE", "SHORT", "INTEGER", "LONG", "FLOAT", "DOUBLE",
	"BIG_DECIMAL", "BIG_INTEGER", "UNBOUND_DECIMAL", "UNBOUND_INTEGER", "BOOLEAN", "CHARACTER",
	"LOCAL_DATE", "LOCAL_DATE_TIME", "LOCAL_TIME", "ZONED_DATE_TIME", "YEAR", "YEAR_MONTH",
	"UUID_TYPE", "TIME_UUID_TYPE", "BYTE_ARRAY", "BYTE_BUFFER", "DATE", "OBJECT", "LIST", "MAP", "SET"}

func knownDataType(s string) bool {
	for _, t := range DataTypes {
		if t == s {
			return true
		}
	}
	return false
}

func boolPtr(b bool) *bool { return &b }
