package storagetest

import (
	"testing"

	"svc/storage"
)

// IAMClients runs the machine-client part of the IAM contract alone, for an
// engine that implements the stores one at a time.
func IAMClients(t *testing.T, newStore func(t *testing.T) storage.M2MClients) {
	iamClients(t, newStore(t))
}

// IAMKeypairs runs the keypair part of the IAM contract alone.
func IAMKeypairs(t *testing.T, newStore func(t *testing.T) storage.Keypairs) {
	iamKeypairs(t, newStore(t))
}
