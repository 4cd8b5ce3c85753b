package postgres

import (
	"context"
	"testing"

	"svc/storage"
	"svc/storage/storagetest"
)

func TestIAMClientsContract(t *testing.T) {
	db := openTest(t)
	storagetest.IAMClients(t, func(t *testing.T) storage.M2MClients {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE iam_m2m_client"); err != nil {
			t.Fatal(err)
		}
		return db.M2MClients()
	})
}

func TestIAMKeypairsContract(t *testing.T) {
	db := openTest(t)
	storagetest.IAMKeypairs(t, func(t *testing.T) storage.Keypairs {
		if _, err := db.pool.Exec(context.Background(), "TRUNCATE iam_keypair"); err != nil {
			t.Fatal(err)
		}
		return db.Keypairs()
	})
}

// A restart keeps clients and keypairs: a second engine on the same
// database reads what the first wrote.
func TestIAMSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	db1, err := Open(ctx, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	db1.pool.Exec(ctx, "TRUNCATE iam_m2m_client, iam_keypair")
	if err := db1.M2MClients().CreateClient(ctx, &storage.M2MClient{ClientID: "KEEP1", Tenant: "t", UserID: "KEEP1",
		Roles: []string{"ROLE_M2M"}, SecretHash: []byte{7}}); err != nil {
		t.Fatal(err)
	}
	if err := db1.Keypairs().CreateKeypair(ctx, &storage.Keypair{KID: "kp1", Audience: "client", Algorithm: "RS256",
		PublicSPKI: []byte{1}, PrivateSealed: []byte{2}, Active: true}, nil); err != nil {
		t.Fatal(err)
	}
	db1.Close()
	db2 := openTest(t)
	c, err := db2.M2MClients().LookupClient(ctx, "KEEP1")
	if err != nil || c.Tenant != "t" || string(c.SecretHash) != "\x07" {
		t.Fatalf("client after reopen: %+v %v", c, err)
	}
	k, err := db2.Keypairs().GetKeypair(ctx, "kp1")
	if err != nil || !k.Active || string(k.PrivateSealed) != "\x02" {
		t.Fatalf("keypair after reopen: %+v %v", k, err)
	}
}
