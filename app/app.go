package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard/switchboard/models"
)

// Env is the process environment Run works in (tests substitute it).
type Env struct {
	Args   []string
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
}

// ErrUsage marks command-line mistakes (exit code 2).
var ErrUsage = errors.New("usage")

const usage = `usage: switchboard [command]

commands:
  serve                                   run the HTTP API (default)
  migrate                                 apply the database schema and exit
  admin create --username U --password P  create or reset a platform administrator
  key create --name N [--tenant T] [--extension E]
                                          create an API key; prints the key alone
  sim [--calls-per-second N]              run a fake FreeSWITCH generating calls
  chat sync                               reconcile chat rooms, accounts and memberships on ejabberd
  schema-sql RESOURCE                     print a starting migration for a resource
`

// Run dispatches a subcommand.
func Run(ctx context.Context, env Env) error {
	args := env.Args
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, env)
	case "migrate":
		return withStore(ctx, env, func(cfg Config, st *models.Store) error {
			fmt.Fprintln(env.Stdout, "schema is up to date")
			return nil
		})
	case "admin":
		return adminCommand(ctx, env, args)
	case "key":
		return keyCommand(ctx, env, args)
	case "sim":
		return simCommand(ctx, env, args)
	case "chat":
		return chatCommand(ctx, env, args)
	case "schema-sql":
		return schemaSQL(env, args)
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return nil
	}
	fmt.Fprint(env.Stderr, usage)
	return fmt.Errorf("%w: unknown command %q", ErrUsage, cmd)
}

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
	if _, err := randRead(key); err != nil {
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

func adminCommand(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("%w: admin create --username U --password P", ErrUsage)
	}
	fs := flag.NewFlagSet("admin create", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	user := fs.String("username", "", "administrator user name")
	pass := fs.String("password", "", "password (at least 12 characters)")
	if err := fs.Parse(args[1:]); err != nil || *user == "" || *pass == "" {
		return fmt.Errorf("%w: admin create --username U --password P", ErrUsage)
	}
	return withStore(ctx, env, func(_ Config, st *models.Store) error {
		created, err := st.SetAdmin(ctx, *user, *pass)
		if err != nil {
			return fmt.Errorf("admin create: %w", err)
		}
		if created {
			fmt.Fprintf(env.Stderr, "administrator %s created\n", *user)
		} else {
			fmt.Fprintf(env.Stderr, "administrator %s: password reset\n", *user)
		}
		return nil
	})
}

func keyCommand(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("%w: key create --name N [--tenant T] [--extension E]", ErrUsage)
	}
	fs := flag.NewFlagSet("key create", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	name := fs.String("name", "", "key name")
	tenant := fs.String("tenant", "", "tenant (absent: platform key)")
	ext := fs.String("extension", "", "extension the key acts as (needs --tenant)")
	if err := fs.Parse(args[1:]); err != nil || *name == "" {
		return fmt.Errorf("%w: key create --name N [--tenant T] [--extension E]", ErrUsage)
	}
	return withStore(ctx, env, func(_ Config, st *models.Store) error {
		in := map[string]any{"name": *name}
		if *tenant != "" {
			in["tenant"] = *tenant
		}
		if *ext != "" {
			in["extension"] = *ext
		}
		rec, err := st.CreateKey(ctx, in, "cli")
		if err != nil {
			return fmt.Errorf("key create: %w", err)
		}
		fmt.Fprintln(env.Stdout, rec["key"])
		return nil
	})
}

func schemaSQL(env Env, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%w: schema-sql RESOURCE", ErrUsage)
	}
	for _, r := range models.Resources {
		if r.Name == args[0] {
			for _, d := range []string{"mysql", "sqlite"} {
				fmt.Fprintf(env.Stdout, "-- %s\n%s\n", d, models.DDL(r, models.DialectNamed(d)))
			}
			return nil
		}
	}
	return fmt.Errorf("%w: unknown resource %q", ErrUsage, args[0])
}
