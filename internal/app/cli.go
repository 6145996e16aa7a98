package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kong"

	"github.com/switchboard/switchboard/internal/models"
)

// The command line, declared once: kong derives parsing, --help on every
// command and the usage text from these structs.
type cli struct {
	Serve     serveCmd     `cmd:"" default:"1" help:"Run the HTTP API (the default command); migrates the schema first."`
	Migrate   migrateCmd   `cmd:"" help:"Apply the database schema and exit (safe to run twice, and from two replicas at once)."`
	Admin     adminCmd     `cmd:"" help:"Manage platform administrators (HTTP Basic)."`
	Key       keyCmd       `cmd:"" help:"Manage API keys."`
	Sim       simCmd       `cmd:"" help:"Run a fake FreeSWITCH event socket that keeps placing calls."`
	Chat      chatCmd      `cmd:"" help:"Team chat on ejabberd."`
	Import    importCmd    `cmd:"" help:"Import data from another system (CDRs)."`
	SchemaSQL schemaSQLCmd `cmd:"" name:"schema-sql" help:"Print a starting migration for a resource (for developers)."`
	Version   versionCmd   `cmd:"" help:"Print the version and the commit this binary was built from."`
	Health    healthCmd    `cmd:"" help:"Exit 0 when the local server answers /readyz with 200 (container healthchecks; the image has no shell or curl)."`
}

// runCtx is what every command's Run receives.
type runCtx struct {
	ctx context.Context
	env Env
}

// exitRequest carries kong's exit (after --help) out of the parser without
// ending the process, so Run stays callable from tests.
type exitRequest struct{ code int }

// Run parses the command line and runs the command. --help anywhere prints
// that command's usage on stdout and returns nil without starting anything.
func Run(ctx context.Context, env Env) (err error) {
	args := env.Args
	if len(args) > 0 && args[0] == "help" {
		args = append(append([]string{}, args[1:]...), "--help")
	}
	var root cli
	parser, err := kong.New(&root,
		kong.Name("switchboard"),
		kong.Description("A multi-tenant control plane for FreeSWITCH. Configuration comes from the SWITCHBOARD_* environment variables listed below."),
		kong.Writers(env.Stdout, env.Stderr),
		kong.Exit(func(code int) { panic(exitRequest{code}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(helpWithSettings),
	)
	if err != nil {
		return fmt.Errorf("command line: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			req, ok := r.(exitRequest)
			if !ok {
				panic(r)
			}
			if req.code != 0 {
				err = fmt.Errorf("%w: exit %d", ErrUsage, req.code)
			}
		}
	}()
	kctx, err := parser.Parse(args)
	if err != nil {
		var perr *kong.ParseError
		if errors.As(err, &perr) && perr.Context != nil {
			parser.Stdout = env.Stderr // usage after a mistake belongs on stderr
			_ = perr.Context.PrintUsage(true)
		}
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return kctx.Run(&runCtx{ctx: ctx, env: env})
}

// helpWithSettings is kong's help, followed on the top level and serve's
// by every environment variable (the settings table, config.go).
func helpWithSettings(options kong.HelpOptions, ctx *kong.Context) error {
	if err := kong.DefaultHelpPrinter(options, ctx); err != nil {
		return err
	}
	if sel := ctx.Selected(); sel == nil || sel.Name == "serve" {
		writeSettingsHelp(ctx.Stdout)
	}
	return nil
}

type serveCmd struct{}

func (serveCmd) Run(rc *runCtx) error { return serve(rc.ctx, rc.env) }

type migrateCmd struct{}

func (migrateCmd) Run(rc *runCtx) error {
	return withStore(rc.ctx, rc.env, func(Config, *models.Store) error {
		fmt.Fprintln(rc.env.Stdout, "schema is up to date")
		return nil
	})
}

type adminCmd struct {
	Create adminCreateCmd `cmd:"" help:"Create a platform administrator, or reset an existing one's password."`
}

type adminCreateCmd struct {
	Username      string `required:"" help:"Administrator user name."`
	Password      string `help:"Password (at least 12 characters); visible to other users in the process list, prefer --password-stdin." xor:"password"`
	PasswordStdin bool   `help:"Read the password from the first line of standard input." xor:"password"`
}

func (c adminCreateCmd) Run(rc *runCtx) error {
	pass := c.Password
	if c.PasswordStdin {
		if rc.env.Stdin == nil {
			return fmt.Errorf("%w: --password-stdin: no standard input", ErrUsage)
		}
		line, err := bufio.NewReader(rc.env.Stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read password from stdin: %w", err)
		}
		pass = strings.TrimRight(line, "\r\n")
	}
	if pass == "" {
		return fmt.Errorf("%w: admin create needs --password or --password-stdin with a non-empty password", ErrUsage)
	}
	return withStore(rc.ctx, rc.env, func(_ Config, st *models.Store) error {
		created, err := st.SetAdmin(rc.ctx, c.Username, pass)
		if err != nil {
			return fmt.Errorf("admin create: %w", err)
		}
		if created {
			fmt.Fprintf(rc.env.Stderr, "administrator %s created\n", c.Username)
		} else {
			fmt.Fprintf(rc.env.Stderr, "administrator %s: password reset\n", c.Username)
		}
		return nil
	})
}

type keyCmd struct {
	Create keyCreateCmd `cmd:"" help:"Create an API key; prints only the key on stdout (shown once, only its hash is stored)."`
	List   keyListCmd   `cmd:"" help:"List API keys (never their values)."`
	Revoke keyRevokeCmd `cmd:"" help:"Revoke an API key by id; refused on its next use on every replica."`
}

type keyCreateCmd struct {
	Name      string `required:"" help:"Key name."`
	Tenant    string `help:"Tenant the key is limited to (absent: a platform key)."`
	Extension string `help:"Extension the key acts as (needs --tenant)."`
}

func (c keyCreateCmd) Run(rc *runCtx) error {
	if c.Extension != "" && c.Tenant == "" {
		return fmt.Errorf("%w: key create: --extension needs --tenant", ErrUsage)
	}
	return withStore(rc.ctx, rc.env, func(_ Config, st *models.Store) error {
		in := map[string]any{"name": c.Name}
		if c.Tenant != "" {
			in["tenant"] = c.Tenant
		}
		if c.Extension != "" {
			in["extension"] = c.Extension
		}
		rec, err := st.CreateKey(rc.ctx, in, "cli")
		if err != nil {
			return fmt.Errorf("key create: %w", err)
		}
		fmt.Fprintln(rc.env.Stdout, rec["key"])
		return nil
	})
}

type keyListCmd struct {
	Tenant string `help:"Only this tenant's keys."`
}

func (c keyListCmd) Run(rc *runCtx) error {
	return withStore(rc.ctx, rc.env, func(_ Config, st *models.Store) error {
		tw := tabwriter.NewWriter(rc.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tTENANT\tEXTENSION\tPREFIX\tCREATED\tLAST USED\tREVOKED")
		const pageSize = 1000
		for offset := 0; ; offset += pageSize {
			recs, total, err := st.ListKeys(rc.ctx, c.Tenant, models.Page{Limit: pageSize, Offset: offset})
			if err != nil {
				return fmt.Errorf("key list: %w", err)
			}
			for _, r := range recs {
				fmt.Fprintf(tw, "%v\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r["id"], r["name"], orDash(r["tenant"]),
					orDash(r["extension"]), r["key_prefix"], r["created_at"], orDash(r["last_used_at"]), orDash(r["revoked_at"]))
			}
			if offset+len(recs) >= total || len(recs) == 0 {
				break
			}
		}
		return tw.Flush()
	})
}

func orDash(v any) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return "-"
}

type keyRevokeCmd struct {
	ID string `arg:"" help:"The key's id (from key list)."`
}

func (c keyRevokeCmd) Run(rc *runCtx) error {
	return withStore(rc.ctx, rc.env, func(_ Config, st *models.Store) error {
		if err := st.RevokeKey(rc.ctx, c.ID, ""); err != nil {
			if errors.Is(err, models.ErrNotFound) {
				return fmt.Errorf("key revoke: no key with id %s", c.ID)
			}
			return fmt.Errorf("key revoke: %w", err)
		}
		fmt.Fprintf(rc.env.Stderr, "key %s revoked\n", c.ID)
		return nil
	})
}

type schemaSQLCmd struct {
	Resource string `arg:"" help:"Resource name as in the registry (e.g. extensions)."`
}

func (c schemaSQLCmd) Run(rc *runCtx) error {
	for _, r := range models.Resources {
		if r.Name == c.Resource {
			for _, d := range []string{"mysql", "sqlite"} {
				fmt.Fprintf(rc.env.Stdout, "-- %s\n%s\n", d, models.DDL(r, models.DialectNamed(d)))
			}
			return nil
		}
	}
	return fmt.Errorf("%w: unknown resource %q", ErrUsage, c.Resource)
}

// Version and Commit may be set at link time:
//
//	go build -ldflags "-X github.com/switchboard/switchboard/internal/app.Version=1.2.0 -X github.com/switchboard/switchboard/internal/app.Commit=$(git rev-parse HEAD)"
//
// Without them the commit comes from the VCS stamp Go embeds in binaries
// built inside a git checkout.
var (
	Version = "dev"
	Commit  = ""
)

type versionCmd struct{}

func (versionCmd) Run(rc *runCtx) error {
	fmt.Fprintln(rc.env.Stdout, versionLine())
	return nil
}

// versionLine is "switchboard VERSION commit REV[ (modified)] built TIME GOVERSION".
func versionLine() string {
	commit, when, modified, goVersion := Commit, "", false, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value
				}
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if commit == "" {
		commit = "unknown"
	}
	line := "switchboard " + Version + " commit " + commit
	if modified && Commit == "" {
		line += " (modified)"
	}
	if when != "" {
		line += " built " + when
	}
	if goVersion != "" {
		line += " " + goVersion
	}
	return line
}

type healthCmd struct {
	URL     string        `help:"URL to check (default: http://127.0.0.1:<port of SWITCHBOARD_LISTEN>/readyz)."`
	Timeout time.Duration `default:"3s" help:"Give up after this long."`
}

func (c healthCmd) Run(rc *runCtx) error {
	target := c.URL
	if target == "" {
		cfg, err := LoadConfig(rc.env.Getenv)
		if err != nil {
			return err
		}
		_, port, _ := net.SplitHostPort(cfg.Listen)
		target = "http://" + net.JoinHostPort("127.0.0.1", port) + "/readyz"
	}
	ctx, cancel := context.WithTimeout(rc.ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("%w: --url: %v", ErrUsage, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s answered %d", target, resp.StatusCode)
	}
	fmt.Fprintln(rc.env.Stdout, "ok")
	return nil
}
