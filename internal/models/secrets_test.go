package models_test

import (
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/switchboard/switchboard/internal/models"
)

// Passwords are stored at bcrypt's default cost: the HTTP test helpers
// lower it for their own processes only (models.SetTestPasswordCost).
func TestPasswordHashedAtDefaultCost(t *testing.T) {
	h, err := models.HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if cost, err := bcrypt.Cost([]byte(h)); err != nil || cost != bcrypt.DefaultCost {
		t.Fatalf("cost %d (%v), want %d", cost, err, bcrypt.DefaultCost)
	}
	if !models.CheckPassword(h, "correct horse battery staple") || models.CheckPassword(h, "correct horse battery stapler") {
		t.Fatal("the hash does not check its own password only")
	}
}
