package providertest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"
)

// Kannel binaries as Debian's kannel and kannel-extras install them.
const (
	Bearerbox = "/usr/sbin/bearerbox"
	Smsbox    = "/usr/sbin/smsbox"
	Fakesmsc  = "/usr/lib/kannel/test/fakesmsc"
)

// KannelConfig is what the generated kannel.conf needs.
type KannelConfig struct {
	Dir                                  string
	AdminPort, SmsboxPort, SendsmsPort   int
	SMSCPort                             int
	Username, Password                   string
	MOURL                                string // the sms-service get-url (Kannel's %-escapes allowed)
	AdminPassword                        string
	BearerboxLog, SmsboxLog, FakesmscLog string
}

// Kannel is a running bearerbox + smsbox with fakesmsc as the SMSC.
type Kannel struct {
	Cfg        KannelConfig
	SendsmsURL string
	fakesmsc   *exec.Cmd
	procs      []*exec.Cmd
}

// confTemplate renders deploy/kannel/kannel.conf.tmpl's shape: one fake
// SMSC (fakesmsc connects to it), one smsbox with a sendsms user, and a
// default sms-service forwarding every MO message to Switchboard.
var confTemplate = template.Must(template.New("kannel").Parse(KannelConfTemplate))

// KannelConfTemplate is the configuration the test runs Kannel with; the
// README's example for production differs only in the SMSC group.
const KannelConfTemplate = `group = core
admin-port = {{.AdminPort}}
admin-password = {{.AdminPassword}}
admin-allow-ip = "127.0.0.1"
smsbox-port = {{.SmsboxPort}}
box-allow-ip = "127.0.0.1"
log-file = "{{.BearerboxLog}}"
log-level = 1
dlr-storage = internal

group = smsc
smsc = fake
smsc-id = fake1
port = {{.SMSCPort}}
connect-allow-ip = "127.0.0.1"

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = {{.SmsboxPort}}
sendsms-port = {{.SendsmsPort}}
log-file = "{{.SmsboxLog}}"
log-level = 1

group = sendsms-user
username = {{.Username}}
password = {{.Password}}

group = sms-service
keyword = default
get-url = "{{.MOURL}}"
max-messages = 0
catch-all = true
`

// FreePort returns a TCP port nothing listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// KannelAvailable reports whether the Kannel binaries are installed.
func KannelAvailable() error {
	for _, b := range []string{Bearerbox, Smsbox, Fakesmsc} {
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("%s: %w (apt-get install kannel kannel-extras)", b, err)
		}
	}
	return nil
}

// StartKannel writes kannel.conf into a temporary directory and starts
// bearerbox, smsbox and fakesmsc; fakesmsc sends the given MO lines
// ("sender receiver text words...") one per interval. Everything stops at
// the end of the test.
func StartKannel(t testing.TB, cfg KannelConfig, moInterval time.Duration, mo ...string) *Kannel {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	for _, p := range []*int{&cfg.AdminPort, &cfg.SmsboxPort, &cfg.SendsmsPort, &cfg.SMSCPort} {
		if *p == 0 {
			*p = FreePort(t)
		}
	}
	if cfg.AdminPassword == "" {
		cfg.AdminPassword = "admin-" + randomHex(4)
	}
	cfg.BearerboxLog = filepath.Join(cfg.Dir, "bearerbox.log")
	cfg.SmsboxLog = filepath.Join(cfg.Dir, "smsbox.log")
	cfg.FakesmscLog = filepath.Join(cfg.Dir, "fakesmsc.log")
	var conf bytes.Buffer
	if err := confTemplate.Execute(&conf, cfg); err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(cfg.Dir, "kannel.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	k := &Kannel{Cfg: cfg, SendsmsURL: fmt.Sprintf("http://127.0.0.1:%d/cgi-bin/sendsms", cfg.SendsmsPort)}
	t.Cleanup(k.stop)
	k.start(t, Bearerbox, confPath)
	// The admin port answers once bearerbox is up; probing the SMSC port
	// would look like an SMSC client to smsc_fake.
	waitPort(t, cfg.AdminPort, k)
	k.start(t, Smsbox, confPath)
	waitPort(t, cfg.SendsmsPort, k)
	args := []string{"-H", "127.0.0.1", "-r", fmt.Sprint(cfg.SMSCPort), "-i", fmt.Sprintf("%.2f", moInterval.Seconds()), "-m", fmt.Sprint(len(mo))}
	if len(mo) == 0 {
		args[len(args)-1] = "0"
		mo = []string{"0 0 text unused"}
	}
	k.fakesmsc = k.start(t, Fakesmsc, append(args, mo...)...)
	return k
}

func (k *Kannel) start(t testing.TB, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	log, err := os.Create(filepath.Join(k.Cfg.Dir, filepath.Base(bin)+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	k.procs = append(k.procs, cmd)
	return cmd
}

// FakesmscOutput is what the simulated SMSC printed: every MT message it
// received appears as "Got message N: <from to text ...>".
func (k *Kannel) FakesmscOutput() string {
	b, _ := os.ReadFile(filepath.Join(k.Cfg.Dir, "fakesmsc.out"))
	return string(b)
}

// Logs returns the tail of every Kannel log, for failure messages.
func (k *Kannel) Logs() string {
	var b strings.Builder
	for _, f := range []string{"bearerbox.out", "smsbox.out", "fakesmsc.out", "bearerbox.log", "smsbox.log"} {
		data, _ := os.ReadFile(filepath.Join(k.Cfg.Dir, f))
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", f, data)
	}
	return b.String()
}

func (k *Kannel) stop() {
	for i := len(k.procs) - 1; i >= 0; i-- {
		p := k.procs[i]
		if p.Process != nil {
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
				<-done
			}
		}
	}
}

func waitPort(t testing.TB, port int, k *Kannel) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("kannel: nothing listens on port %d after 10s\n%s", port, k.Logs())
}
