package entity

import (
	"context"
	"errors"

	"svc/platform/apierr"
)

// DeleteEach deletes the given entities one by one through Delete (a
// tombstone revision, its audit event and its own transaction each), for
// stream-data delete. An entity that fails is reported with its message
// and the rest go on; one deleted meanwhile counts as failed, not removed.
func (s *Service) DeleteEach(ctx context.Context, tenant, user, kind string, ids [][16]byte) (int64, map[[16]byte]string) {
	var removed int64
	failed := map[[16]byte]string{}
	a := Actor{Tenant: tenant, User: user, Kind: kind}
	for _, id := range ids {
		if ctx.Err() != nil {
			failed[id] = ctx.Err().Error()
			continue
		}
		if _, err := s.Delete(ctx, a, id); err != nil {
			if e, ok := apierr.As(err); ok {
				failed[id] = e.Message
			} else if errors.Is(err, context.Canceled) {
				failed[id] = "canceled"
			} else {
				failed[id] = "delete failed"
			}
			continue
		}
		removed++
	}
	return removed, failed
}
