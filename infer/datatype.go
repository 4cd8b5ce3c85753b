package infer

// DataType is a primitive type of the SIMPLE_VIEW vocabulary. Its numeric value
// is the canonical member order (docs/decisions/0010-schema-inference.md) (integers, decimals, text, temporal, identifier,
// binary, boolean, NULL last), so a bitset iterated from bit 0 prints
// polymorphic sets in the required order.
type DataType uint8

// The DataType values, in canonical member order.
const (
	Byte DataType = iota
	Short
	Integer
	Long
	BigInteger
	UnboundInteger
	Float
	Double
	BigDecimal
	UnboundDecimal
	String
	Character
	LocalDate
	LocalDateTime
	LocalTime
	ZonedDateTime
	Year
	YearMonth
	UUIDType
	TimeUUIDType
	ByteArray
	Boolean
	Null

	numDataTypes
)

var dataTypeNames = [numDataTypes]string{
	"BYTE", "SHORT", "INTEGER", "LONG", "BIG_INTEGER", "UNBOUND_INTEGER",
	"FLOAT", "DOUBLE", "BIG_DECIMAL", "UNBOUND_DECIMAL",
	"STRING", "CHARACTER",
	"LOCAL_DATE", "LOCAL_DATE_TIME", "LOCAL_TIME", "ZONED_DATE_TIME", "YEAR", "YEAR_MONTH",
	"UUID_TYPE", "TIME_UUID_TYPE", "BYTE_ARRAY", "BOOLEAN", "NULL",
}

// String returns the SIMPLE_VIEW name, e.g. "BIG_DECIMAL".
func (t DataType) String() string {
	if t < numDataTypes {
		return dataTypeNames[t]
	}
	return "INVALID"
}

// ParseDataType maps a SIMPLE_VIEW name back to its DataType.
func ParseDataType(name string) (DataType, bool) {
	for i, n := range dataTypeNames {
		if n == name {
			return DataType(i), true
		}
	}
	return 0, false
}

// IsNumeric reports whether t belongs to the integer or decimal families,
// the only types that widen into each other.
func (t DataType) IsNumeric() bool { return t <= UnboundDecimal }

// IsInteger reports whether t belongs to the integer family.
func (t DataType) IsInteger() bool { return t <= UnboundInteger }
