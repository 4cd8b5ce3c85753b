package fast

import (
	"github.com/valyala/fasthttp"

	"svc/entity"
)

// hdrTxToken carries a transaction routing token on compute-member
// callbacks (docs/decisions/0015-transactions.md).
const hdrTxToken = "X-Tx-Token"

// txJoin joins a request carrying X-Tx-Token into the open transaction
// the token names, after authentication: its entity writes then go into
// that transaction and its by-id reads see them (entity/txjoin.go says
// exactly which paths). Token errors answer before the handler: 410
// TRANSACTION_EXPIRED, 401 UNAUTHORIZED, 403 FORBIDDEN, 404
// TRANSACTION_NOT_FOUND. Without the header nothing changes.
func (s *Server) txJoin(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if s.deps.Entities == nil {
		return next
	}
	return func(ctx *fasthttp.RequestCtx) {
		tok := ctx.Request.Header.Peek(hdrTxToken)
		p := PrincipalOf(ctx)
		if len(tok) == 0 || p == nil {
			next(ctx)
			return
		}
		j, err := s.deps.Entities.JoinTx(p.TenantID, string(tok))
		if err != nil {
			s.writeError(ctx, err)
			return
		}
		ctx.SetUserValue(entity.JoinKey, j)
		next(ctx)
	}
}
