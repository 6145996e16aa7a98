package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/models"
)

// Env is the process environment Run works in (tests substitute it).
type Env struct {
	Args   []string
	Getenv func(string) string
	Stdin  io.Reader // read by admin create --password-stdin
	Stdout io.Writer
	Stderr io.Writer
}

// ErrUsage marks command-line mistakes (exit code 2).
var ErrUsage = errors.New("usage")

// newLogger builds the one slog handler of the process.
func newLogger(cfg Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// openStore opens and migrates the database named by the configuration.
func openStore(ctx context.Context, cfg Config) (*models.Store, error) {
	key := cfg.SecretKey
	if key == nil {
		var err error
		if key, err = localSecretKey(cfg.DatabaseURL); err != nil {
			return nil, err
		}
	}
	sealer, err := models.NewSealer(key)
	if err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_SECRET_KEY: %w", err)
	}
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		return nil, fmt.Errorf("resource registry: %w", err)
	}
	reg.SetRenderedDestinations(dialplan.RenderedDestinationTypes)
	st, err := models.Open(ctx, cfg.DatabaseURL, reg, sealer)
	if err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_DATABASE_URL: %w", err)
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// localSecretKey keeps the embedded setup zero-configuration: the key lives
// in a file beside the SQLite database, created on first start.
func localSecretKey(dbURL string) ([]byte, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(dbURL, "sqlite:"), "//")
	keyPath := filepath.Join(filepath.Dir(path), "secret.key")
	if b, err := os.ReadFile(keyPath); err == nil {
		return decodeKey(strings.TrimSpace(string(b)))
	}
	if err := os.MkdirAll(filepath.Dir(keyPath), 0o750); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(keyPath), err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyPath, []byte(fmt.Sprintf("%x\n", key)), 0o600); err != nil {
		return nil, fmt.Errorf("write secret key: %w", err)
	}
	return key, nil
}

func withStore(ctx context.Context, env Env, fn func(Config, *models.Store) error) error {
	cfg, err := LoadConfig(env.Getenv)
	if err != nil {
		return err
	}
	slog.SetDefault(newLogger(cfg, env.Stderr))
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(cfg, st)
}
