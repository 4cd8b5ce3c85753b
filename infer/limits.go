package infer

// Limits bound what one document (or one SIMPLE_VIEW import) may make the
// engine do, so hostile input costs a 400 instead of memory or time. A zero
// or negative field takes its default.
type Limits struct {
	// MaxDepth caps container nesting in a document.
	MaxDepth int
	// MaxFields caps the members of one JSON object (and the keys of one
	// SIMPLE_VIEW node); every member can become a field of the model.
	MaxFields int
	// MaxArrayWidth caps the elements of one array: the model keeps a type
	// set per index, so width is memory.
	MaxArrayWidth int
	// MaxNumberDigits caps the characters of one number literal. Numbers are
	// classified from their text, so this bounds work, not precision.
	MaxNumberDigits int
	// MaxStringBytes caps one string literal (raw bytes between the quotes).
	MaxStringBytes int
	// MaxBytes caps the whole document (the service's body limit is 10 MiB).
	MaxBytes int
}

// DefaultLimits are the bounds used where a Limits field is zero.
func DefaultLimits() Limits {
	return Limits{
		MaxDepth:        256,
		MaxFields:       10000,
		MaxArrayWidth:   100000,
		MaxNumberDigits: 1000,
		MaxStringBytes:  1 << 20,
		MaxBytes:        10 << 20,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxDepth > 0 {
		d.MaxDepth = l.MaxDepth
	}
	if l.MaxFields > 0 {
		d.MaxFields = l.MaxFields
	}
	if l.MaxArrayWidth > 0 {
		d.MaxArrayWidth = l.MaxArrayWidth
	}
	if l.MaxNumberDigits > 0 {
		d.MaxNumberDigits = l.MaxNumberDigits
	}
	if l.MaxStringBytes > 0 {
		d.MaxStringBytes = l.MaxStringBytes
	}
	if l.MaxBytes > 0 {
		d.MaxBytes = min(l.MaxBytes, maxDocumentBytes)
	}
	return d
}

// maxDocumentBytes is the hard ceiling on MaxBytes: offsets into a document
// are kept in 30 bits.
const maxDocumentBytes = 1<<30 - 1
