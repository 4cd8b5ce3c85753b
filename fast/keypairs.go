package fast

import (
	"encoding/base64"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"svc/iam"
	"svc/platform/apierr"
	"svc/storage"
)

// Signing keypairs (docs/decisions/0006-tokens-keypairs-clients.md). Keypairs are the service's, not a tenant's:
// they sign every tenant's tokens, so only an administrator of the bootstrap
// tenant manages them; the route table's Admin level is
// checked first, serviceAdmin narrows it.
func keypairHandlers(s *Server) map[string]fasthttp.RequestHandler {
	if s.deps.IAM == nil || s.deps.IAM.Keys == nil {
		return nil
	}
	return map[string]fasthttp.RequestHandler{
		"getCurrentJwtKeyPair": s.serviceAdmin(s.currentKeypair),
		"issueJwtKeyPair":      s.serviceAdmin(s.issueKeypair),
		"invalidateJwtKeyPair": s.serviceAdmin(s.invalidateKeypair),
		"reactivateJwtKeyPair": s.serviceAdmin(s.reactivateKeypair),
		"deleteJwtKeyPair":     s.serviceAdmin(s.deleteKeypair),
	}
}

// serviceAdmin lets through only ROLE_ADMIN of the bootstrap tenant
// (SVC_BOOTSTRAP_TENANT_ID); an administrator of any other tenant gets the
// same 403 FORBIDDEN a non-administrator gets.
func (s *Server) serviceAdmin(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		p := PrincipalOf(ctx)
		if p == nil || !p.HasRole(iam.RoleAdmin) || p.TenantID != s.cfg.BootstrapTenantID {
			s.writeProblem(ctx, NewProblem(apierr.Forbidden, "signing keypairs belong to the service: ROLE_ADMIN in the bootstrap tenant is required"))
			return
		}
		next(ctx)
	}
}

// keypairDTO is the public part only.
type keypairDTO struct {
	KeyID     string    `json:"keyId"`
	Algorithm string    `json:"algorithm"`
	Audience  string    `json:"audience"`
	PublicKey string    `json:"publicKey"`
	Active    bool      `json:"active"`
	ValidFrom time.Time `json:"validFrom"`
	ValidTo   time.Time `json:"validTo"`
}

func keypairOut(k *storage.Keypair) keypairDTO {
	return keypairDTO{KeyID: k.KID, Algorithm: k.Algorithm, Audience: k.Audience,
		PublicKey: base64.StdEncoding.EncodeToString(k.PublicSPKI), Active: k.Active,
		ValidFrom: k.ValidFrom.UTC(), ValidTo: k.ValidTo.UTC()}
}

// maxKeypairBody caps keypair request bodies.
const maxKeypairBody = 1 << 20

func badBody() *Problem { return NewProblem(apierr.BadRequest, "invalid request body") }

// decodeBody decodes a JSON object body into v; an empty body is allowed
// only when optional.
func decodeBody(ctx *fasthttp.RequestCtx, v any, optional bool) bool {
	body := ctx.PostBody()
	if len(body) == 0 {
		return optional
	}
	if len(body) > maxKeypairBody {
		return false
	}
	return json.Unmarshal(body, v) == nil
}

func (s *Server) currentKeypair(ctx *fasthttp.RequestCtx) {
	k, err := s.deps.IAM.Keys.Current(dctx(ctx), string(ctx.QueryArgs().Peek("audience")))
	if err != nil {
		s.writeIAMProblem(ctx, err)
		return
	}
	s.writeJSON(ctx, keypairOut(k))
}

func (s *Server) issueKeypair(ctx *fasthttp.RequestCtx) {
	var req struct {
		Algorithm         string     `json:"algorithm"`
		Audience          string     `json:"audience"`
		ValidFrom         *time.Time `json:"validFrom"`
		ValidTo           *time.Time `json:"validTo"`
		InvalidateCurrent bool       `json:"invalidateCurrent"`
		GraceSec          int64      `json:"invalidateGracePeriodSec"`
	}
	if !decodeBody(ctx, &req, false) {
		s.writeProblem(ctx, badBody())
		return
	}
	ir := iam.IssueRequest{Algorithm: req.Algorithm, Audience: req.Audience, ValidFrom: req.ValidFrom, ValidTo: req.ValidTo,
		InvalidateCurrent: req.InvalidateCurrent}
	if req.InvalidateCurrent {
		ir.GracePeriod = graceOf(req.GraceSec)
	}
	k, err := s.deps.IAM.Keys.Issue(dctx(ctx), ir)
	if err != nil {
		s.writeIAMProblem(ctx, err)
		return
	}
	s.writeJSON(ctx, keypairOut(k))
}

// graceOf turns seconds into a duration, mapping overflow to an invalid
// value so the range check refuses it.
func graceOf(sec int64) time.Duration {
	if sec < 0 || sec > int64(iam.MaxGracePeriod/time.Second) {
		return -1
	}
	return time.Duration(sec) * time.Second
}

func (s *Server) invalidateKeypair(ctx *fasthttp.RequestCtx) {
	var req struct {
		GraceSec int64 `json:"gracePeriodSec"`
	}
	if !decodeBody(ctx, &req, true) {
		s.writeProblem(ctx, badBody())
		return
	}
	if err := s.deps.IAM.Keys.Invalidate(dctx(ctx), routeParam(ctx, "keyId"), graceOf(req.GraceSec)); err != nil {
		s.writeIAMProblem(ctx, err)
		return
	}
	ctx.SetStatusCode(200)
}

func (s *Server) reactivateKeypair(ctx *fasthttp.RequestCtx) {
	var req struct {
		ValidFrom *time.Time `json:"validFrom"`
		ValidTo   time.Time  `json:"validTo"`
	}
	if !decodeBody(ctx, &req, false) {
		s.writeProblem(ctx, badBody())
		return
	}
	k, err := s.deps.IAM.Keys.Reactivate(dctx(ctx), routeParam(ctx, "keyId"), req.ValidFrom, req.ValidTo)
	if err != nil {
		s.writeIAMProblem(ctx, err)
		return
	}
	s.writeJSON(ctx, keypairOut(k))
}

func (s *Server) deleteKeypair(ctx *fasthttp.RequestCtx) {
	if err := s.deps.IAM.Keys.Delete(dctx(ctx), routeParam(ctx, "keyId")); err != nil {
		s.writeIAMProblem(ctx, err)
		return
	}
	ctx.SetStatusCode(200)
}
