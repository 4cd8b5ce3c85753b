package jsondoc

import (
	"errors"

	"svc/platform/apierr"
)

// Problem is the API's 400 for a document Check refused. A syntax error
// keeps the caller's wording (syntaxMsg); the other refusals say what and
// where, prefixed by context ("item 3: payload", "" for the body), with
// the properties `field` (the JSON path) and, for a duplicate, `key`.
func Problem(err error, syntaxMsg, context string) *apierr.Error {
	var e *Error
	if !errors.As(err, &e) || e.Kind == Syntax {
		return apierr.New(apierr.BadRequest, syntaxMsg)
	}
	pre := ""
	if context != "" {
		pre = context + ": "
	}
	switch e.Kind {
	case DuplicateKey:
		return apierr.New(apierr.BadRequest,
			pre+"duplicate key \""+e.Key+"\" at "+e.Path+": a JSON object may name a member once (I-JSON, RFC 7493)",
			apierr.P("field", e.Path), apierr.P("key", e.Key))
	case TooDeep:
		return apierr.New(apierr.BadRequest, pre+e.Reason, apierr.P("field", e.Path))
	}
	return apierr.New(apierr.BadRequest,
		pre+"unsupported text at "+e.Path+": "+e.Reason+"; svc stores UTF-8 text without NUL characters or unpaired surrogates",
		apierr.P("field", e.Path))
}

// CheckProblem checks doc and answers Problem's 400, or nil.
func CheckProblem(doc []byte, syntaxMsg, context string) error {
	if err := Check(doc); err != nil {
		return Problem(err, syntaxMsg, context)
	}
	return nil
}

// TextProblem is the 400 for a parameter or field that is not storable
// text (ValidText false), naming it in `parameter`; nil when s is fine.
func TextProblem(kind, name, s string) error {
	f := TextFault(s)
	if f == "" {
		return nil
	}
	return apierr.New(apierr.BadRequest, kind+" '"+name+"' "+f+"; svc accepts UTF-8 text without NUL characters",
		apierr.P(kind, name))
}

// Refusal checks doc and answers Problem's 400 for its text, duplicate-key
// and depth faults only; a document that is not JSON at all is left to
// the caller's parser and its wording (nil).
func Refusal(doc []byte, context string) error {
	err := Check(doc)
	if err == nil {
		return nil
	}
	if e := (*Error)(nil); errors.As(err, &e) && e.Kind == Syntax {
		return nil
	}
	return Problem(err, "", context)
}
