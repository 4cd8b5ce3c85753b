package postgres

import "github.com/jackc/pgx/v5/pgxpool"

// pgxConn is a pooled connection held for one store call.
type pgxConn struct{ *pgxpool.Conn }
