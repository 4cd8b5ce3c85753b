package infer

import "testing"

func TestClassifyString(t *testing.T) {
	for s, want := range map[string]DataType{
		"2024-01-15":               LocalDate,
		"2024-02-29":               LocalDate,
		"2023-02-29":               String,
		"2024-02-30":               String,
		"2024-13-01":               String,
		"2024-03":                  YearMonth,
		"2024-00":                  String,
		"14:30":                    LocalTime,
		"14:30:00":                 LocalTime,
		"14:30:00.123456789":       LocalTime,
		"14:30:00.1234567890":      String,
		"24:00":                    String,
		"2024-06-20T10:15:30":      LocalDateTime,
		"2024-06-20T10:15":         LocalDateTime,
		"2024-06-20T10:15:30Z":     ZonedDateTime,
		"2024-06-20T10:15+01:00":   ZonedDateTime,
		"2024-01-15T00:00:00.000Z": ZonedDateTime,
		"2024-06-20T10:15:30+01:00[Europe/Paris]": String,
		"20240115":                             String,
		"T10:00":                               String,
		"2024":                                 String,
		"1037":                                 String,
		"123":                                  String,
		"1.5":                                  String,
		"true":                                 String,
		"":                                     String,
		"x":                                    String,
		"550e8400-e29b-41d4-a716-446655440000": String,
	} {
		if got := classifyString([]byte(s)); got != want {
			t.Errorf("%q: %s, want %s", s, got, want)
		}
	}
}
