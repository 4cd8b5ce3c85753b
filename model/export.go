package model

import (
	"context"

	"svc/storage"
)

// AppendExport appends the export envelope {"currentState","model"} of a
// model to dst. MODEL_NOT_FOUND is checked before the converter, as the
// reference does. SIMPLE_VIEW is the stored bytes as they are, so the
// common export decodes nothing.
func (s *Service) AppendExport(ctx context.Context, tenant string, key storage.ModelKey, converter string, dst []byte) ([]byte, error) {
	m, err := s.get(ctx, tenant, key)
	if err != nil {
		return dst, err
	}
	switch converter {
	case ConvSimpleView:
		dst = append(dst, `{"currentState":"`...)
		dst = append(dst, m.State...)
		dst = append(dst, `","model":`...)
		if len(m.Schema) == 0 {
			dst = append(dst, `{"$":{}}`...)
		} else {
			dst = append(dst, m.Schema...)
		}
		return append(dst, '}'), nil
	case ConvJSONSchema:
		im, err := s.decoded(m)
		if err != nil {
			return dst, err
		}
		dst = append(dst, `{"currentState":"`...)
		dst = append(dst, m.State...)
		dst = append(dst, `","model":`...)
		dst = im.AppendJSONSchema(dst)
		return append(dst, '}'), nil
	}
	return dst, badParam("converter", converter, "unsupported export converter: "+converter+"; valid values: JSON_SCHEMA, SIMPLE_VIEW")
}
