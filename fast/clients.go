package fast

import (
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"svc/iam"
	"svc/platform/apierr"
)

// Machine clients (docs/decisions/0006-tokens-keypairs-clients.md): every operation is tenant-scoped by the
// caller's principal; another tenant's client reads as not found.
func clientHandlers(s *Server) map[string]fasthttp.RequestHandler {
	if s.deps.IAM == nil || s.deps.IAM.Clients == nil {
		return nil
	}
	return map[string]fasthttp.RequestHandler{
		"listTechnicalUsers":       s.listClients,
		"createTechnicalUser":      s.createClient,
		"resetTechnicalUserSecret": s.rotateClientSecret,
		"deleteTechnicalUser":      s.deleteClient,
	}
}

type clientDTO struct {
	ClientID       string    `json:"clientId"`
	CreationDate   time.Time `json:"creationDate"`
	LastUpdateDate time.Time `json:"lastUpdateDate"`
	Roles          []string  `json:"roles"`
}

// clientCredentialsDTO is the RFC 7591 result of create and rotate.
type clientCredentialsDTO struct {
	ClientID              string   `json:"client_id"`
	ClientSecret          string   `json:"client_secret"`
	ClientIDIssuedAt      int64    `json:"client_id_issued_at"`
	ClientSecretExpiresAt int64    `json:"client_secret_expires_at"`
	GrantType             string   `json:"grant_type"`
	Roles                 []string `json:"roles"`
}

func (s *Server) listClients(ctx *fasthttp.RequestCtx) {
	l, err := s.deps.IAM.Clients.List(dctx(ctx), PrincipalOf(ctx).TenantID)
	if err != nil {
		s.writeIAMProblem(ctx, err)
		return
	}
	out := make([]clientDTO, 0, len(l))
	for _, c := range l {
		roles := c.Roles
		if roles == nil {
			roles = []string{}
		}
		out = append(out, clientDTO{ClientID: c.ClientID, CreationDate: c.CreatedAt.UTC(), LastUpdateDate: c.UpdatedAt.UTC(), Roles: roles})
	}
	s.writeJSON(ctx, out)
}

func (s *Server) createClient(ctx *fasthttp.RequestCtx) {
	withAdmin := false
	if raw := ctx.QueryArgs().Peek("withAdminRole"); raw != nil {
		v, err := strconv.ParseBool(string(raw))
		if err != nil {
			s.writeProblem(ctx, NewProblem(apierr.BadRequest, "withAdminRole must be a boolean",
				StrProp("parameter", "withAdminRole"), StrProp("invalidValue", string(raw))))
			return
		}
		withAdmin = v
	}
	cr, err := s.deps.IAM.Clients.Create(dctx(ctx), PrincipalOf(ctx).TenantID, withAdmin)
	s.writeCredentials(ctx, cr, err)
}

func (s *Server) rotateClientSecret(ctx *fasthttp.RequestCtx) {
	cr, err := s.deps.IAM.Clients.RotateSecret(dctx(ctx), PrincipalOf(ctx).TenantID, routeParam(ctx, "clientId"))
	s.writeCredentials(ctx, cr, err)
}

func (s *Server) writeCredentials(ctx *fasthttp.RequestCtx, cr *iam.ClientCredentials, err error) {
	if err != nil {
		s.writeIAMProblem(ctx, err)
		return
	}
	s.writeJSON(ctx, clientCredentialsDTO{ClientID: cr.ClientID, ClientSecret: cr.Secret,
		ClientIDIssuedAt: cr.IssuedAt.Unix(), GrantType: iam.GrantClientCredentials, Roles: cr.Roles})
	noStore(ctx)
}

func (s *Server) deleteClient(ctx *fasthttp.RequestCtx) {
	id := routeParam(ctx, "clientId")
	if err := s.deps.IAM.Clients.Delete(dctx(ctx), PrincipalOf(ctx).TenantID, id); err != nil {
		s.writeIAMProblem(ctx, err)
		return
	}
	s.writeJSON(ctx, struct {
		Message  string `json:"message"`
		ClientID string `json:"clientId"`
	}{"M2M client deleted successfully", id})
}
