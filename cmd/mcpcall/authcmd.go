package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf16"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/internal/origin"
)

// authHelp is the auth group's description, also in docs/authorization.md.
const authHelp = `An MCP server that answers 401 wants an OAuth access token. mcpcall auth login
runs the authorization in a browser once and keeps the tokens; every other
command then sends them and refreshes them by itself. A run that needs a new
login never waits for one: it exits 3 and says which mcpcall auth login to run.

Tokens are kept in $MCPCALL_TOKENS, or mcpcall/tokens.json in the user's
config directory (~/.config on Linux), readable by the user only. The client
is registered with the server's authorization server by itself, unless
--client-id (with --client-secret-env VAR for a confidential client) or the
config entry's "oauth"/"auth" fields name one; --client-metadata-url gives a
Client ID Metadata Document URL for servers that support them.`

func (c *cli) authCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "auth", Short: "Log in to servers that want OAuth tokens, and manage the tokens kept", Long: authHelp}
	cmd.AddCommand(c.authLoginCommand(), c.authStatusCommand(), c.authLogoutCommand())
	return cmd
}

func (c *cli) authLoginCommand() *cobra.Command {
	var noBrowser bool
	var wait time.Duration
	var callbackPort int
	cmd := &cobra.Command{
		Use:   "login TARGET",
		Short: "Authorize mcpcall with the server's authorization server, in a browser",
		Long: `login starts a one-request redirect listener on 127.0.0.1, prints the
authorization URL, and opens it in a browser when there is a desktop session
(macOS, Windows, or DISPLAY or WAYLAND_DISPLAY set) unless --no-browser. When
the browser comes back, the tokens are stored for every later command.`,
		Example: `  mcpcall auth login https://mcp.example.com/mcp
  mcpcall auth login --no-browser myserver          # print the URL only (SSH, containers)
  mcpcall auth login --client-id my-app --client-secret-env MY_SECRET https://mcp.example.com/mcp`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.authArgs(false),
		RunE: c.runE(func(cmd *cobra.Command, args []string) error {
			t, err := c.authTarget(cmd, args)
			if err != nil {
				return err
			}
			port := -1 // the config entry's, else any
			if cmd.Flags().Changed("callback-port") {
				if callbackPort < 0 || callbackPort > 65535 {
					return usageErr("--callback-port %d: want a TCP port, 1 to 65535, or 0 for any free one", callbackPort)
				}
				port = callbackPort
			}
			return c.login(cmd.Context(), t, noBrowser, wait, port)
		}),
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "never open a browser: only print the URL")
	cmd.Flags().DurationVar(&wait, "wait", 5*time.Minute, "how long to wait for the browser to come back (the token endpoint then has 30s of its own)")
	cmd.Flags().IntVar(&callbackPort, "callback-port", 0, "the `PORT` of the redirect listener, for a client registered with a fixed redirect URI (http://localhost:PORT/callback); 0: any free port (default: the config entry's callbackPort, else any)")
	c.addTargetFlags(cmd)
	c.addOAuthFlags(cmd)
	c.addFlags(cmd, "trace", "connect-timeout", "max-time")
	return cmd
}

func (c *cli) authStatusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status [TARGET]",
		Short: "List the tokens kept, for one server or all",
		Example: `  mcpcall auth status
  mcpcall auth status --json https://mcp.example.com/mcp`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.authArgs(true),
		RunE: c.runE(func(cmd *cobra.Command, args []string) error {
			serverURL := ""
			if len(args) > 0 || c.f.server != "" {
				t, err := c.authTarget(cmd, args)
				if err != nil {
					return err
				}
				serverURL = t.url
			}
			a, err := auth.New(auth.Config{Store: c.tokenStore()})
			if err != nil {
				return err
			}
			entries, err := a.Tokens(cmd.Context(), serverURL)
			if err != nil {
				return err
			}
			return c.printTokens(entries)
		}),
	}
	c.addTargetFlags(cmd)
	return cmd
}

func (c *cli) authLogoutCommand() *cobra.Command {
	var forgetClient bool
	cmd := &cobra.Command{
		Use:   "logout TARGET",
		Short: "Forget the tokens kept for a server",
		Long: `logout forgets the tokens kept for the server. The client registration made
with its authorization server is kept (it serves every server of that
authorization server) unless --forget-client: the next login then registers
again. A registration the authorization server no longer knows is forgotten
by itself, and a new one made, with a warning.`,
		Example: `  mcpcall auth logout https://mcp.example.com/mcp
  mcpcall auth logout --forget-client https://mcp.example.com/mcp`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.authArgs(false),
		RunE: c.runE(func(cmd *cobra.Command, args []string) error {
			t, err := c.authTarget(cmd, args)
			if err != nil {
				return err
			}
			a, err := auth.New(auth.Config{Store: c.tokenStore(), Logger: c.log})
			if err != nil {
				return err
			}
			var forgot []string
			if forgetClient {
				c.run.lastURL = t.url
				if forgot, err = a.ForgetRegistrations(cmd.Context(), t.url); err != nil {
					return err
				}
			}
			keys, err := a.Logout(cmd.Context(), t.url)
			if err != nil {
				return err
			}
			if c.f.json {
				if keys == nil {
					keys = []auth.Key{}
				}
				out := map[string]any{"removed": keys}
				if forgetClient {
					out["forgotRegistrations"] = append([]string{}, forgot...)
				}
				return json.NewEncoder(c.stdout).Encode(out)
			}
			if len(keys) == 0 {
				fmt.Fprintf(c.stdout, "no token kept for %s\n", t.display)
			}
			for _, k := range keys {
				fmt.Fprintf(c.stdout, "logged out of %s (issuer %s)\n", k.Resource, k.Issuer)
			}
			for _, is := range forgot {
				fmt.Fprintf(c.stdout, "forgot the client registration at %s\n", is)
			}
			if forgetClient && len(forgot) == 0 {
				fmt.Fprintf(c.stdout, "no client registration kept for %s\n", t.display)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&forgetClient, "forget-client", false, "also forget the client registration with the server's authorization server (the next login registers again)")
	c.addTargetFlags(cmd)
	c.addFlags(cmd, "max-time")
	return cmd
}

// authTarget resolves the target of an auth command: an HTTP server.
func (c *cli) authTarget(cmd *cobra.Command, args []string) (*target, error) {
	_, t, err := c.splitTarget(cmd, args)
	if err != nil {
		return nil, err
	}
	if t.isCommand() {
		return nil, usageErr("%s is a stdio server: it takes its credentials from its environment (-e), not OAuth", t.display)
	}
	if t.socket != "" {
		return nil, usageErr("%s is a session: log in to its server's URL; the session's gateway uses the tokens kept", t.display)
	}
	return t, nil
}

// authArgs checks the line of an auth command: a target and nothing
// before it. optional: no target at all is fine too (auth status).
func (c *cli) authArgs(optional bool) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if optional && len(args) == 0 && c.f.server == "" {
			return nil
		}
		own, err := c.splitOwn(cmd, args)
		if err != nil {
			return err
		}
		if len(own) > 0 {
			return usageErr("%s: unexpected arguments %q before the target", cmd.CommandPath(), own)
		}
		return nil
	}
}

// tokenStore is where mcpcall keeps tokens.
func (c *cli) tokenStore() *auth.FileStore {
	if p := c.getenv("MCPCALL_TOKENS"); p != "" {
		return auth.NewFileStore(p)
	}
	return auth.NewFileStore(filepath.Join(c.places.AppConfigDir(), "mcpcall", "tokens.json"))
}

// secretStore is the token store as commands that connect use it: every
// token and client secret read from it or saved to it joins the
// credentials hidden in what mcpcall writes.
type secretStore struct {
	auth.Store
	sec *secrets
}

func (s secretStore) Token(ctx context.Context, k auth.Key) (*auth.Token, error) {
	t, err := s.Store.Token(ctx, k)
	s.addToken(t)
	return t, err
}

func (s secretStore) SaveToken(ctx context.Context, k auth.Key, t *auth.Token) error {
	s.addToken(t)
	return s.Store.SaveToken(ctx, k, t)
}

func (s secretStore) Client(ctx context.Context, issuer string) (*auth.ClientInfo, error) {
	ci, err := s.Store.Client(ctx, issuer)
	if ci != nil {
		s.sec.add(ci.ClientSecret)
	}
	return ci, err
}

func (s secretStore) SaveClient(ctx context.Context, ci *auth.ClientInfo) error {
	if ci != nil {
		s.sec.add(ci.ClientSecret)
	}
	return s.Store.SaveClient(ctx, ci)
}

// DPoPKey passes the store's DPoP key through (auth.KeyStore), so that
// DPoP-bound tokens outlive the run that got them; (nil, nil) for a store
// that keeps none.
func (s secretStore) DPoPKey(ctx context.Context) (*ecdsa.PrivateKey, error) {
	if ks, ok := s.Store.(auth.KeyStore); ok {
		return ks.DPoPKey(ctx)
	}
	return nil, nil
}

// LockTokens passes the store's lock through (auth.LockingStore), so that
// mcpcall runs side by side renew a token once between them; a store
// without one holds nothing off.
func (s secretStore) LockTokens(ctx context.Context) (func(), error) {
	if ls, ok := s.Store.(auth.LockingStore); ok {
		return ls.LockTokens(ctx)
	}
	return func() {}, nil
}

func (s secretStore) addToken(t *auth.Token) {
	if t != nil {
		s.sec.add(t.AccessToken)
		s.sec.add(t.RefreshToken)
	}
}

// authConfig is the OAuth configuration for t: the flags, else the config
// entry's client. It never asks a person (login adds that).
func (c *cli) authConfig(t *target) (auth.Config, error) {
	cfg := auth.Config{ClientName: "mcpcall", Store: secretStore{Store: c.tokenStore(), sec: c.sec}, Logger: c.log}
	if t.oauth != nil {
		t.oauth.ApplyTo(&cfg)
	}
	if c.f.clientID != "" {
		if c.f.clientID != cfg.ClientID {
			cfg.ClientIssuer = "" // the entry's, for its own client
		}
		cfg.ClientID, cfg.ClientSecret = c.f.clientID, ""
	}
	if c.f.clientSecretEnv != "" {
		v, _ := c.lookupEnv(c.f.clientSecretEnv)
		if v = strings.TrimSpace(v); v == "" {
			return cfg, usageErr("--client-secret-env %s: the variable is unset or empty", c.f.clientSecretEnv)
		}
		if cfg.ClientID == "" {
			return cfg, usageErr("--client-secret-env needs --client-id (or a client id in the config entry)")
		}
		cfg.ClientSecret = v
	}
	c.sec.add(cfg.ClientSecret)
	if c.f.clientIssuer != "" {
		if cfg.ClientID == "" {
			return cfg, usageErr("--client-issuer needs --client-id (or a client id in the config entry)")
		}
		cfg.ClientIssuer = c.f.clientIssuer
	}
	if cfg.ClientSecret != "" && cfg.ClientIssuer == "" {
		cfg.ClientIssuer = c.boundIssuer(t, cfg.ClientID)
	}
	cfg.ClientMetadataURL = c.f.clientMetadataURL
	if err := c.grant(&cfg); err != nil {
		return cfg, err
	}
	if len(c.f.scopes) > 0 {
		cfg.Scopes = nil
		for _, s := range c.f.scopes {
			cfg.Scopes = append(cfg.Scopes, strings.Fields(s)...)
		}
	}
	return cfg, nil
}

// boundIssuer is the authorization server a pre-registered client with a
// secret, given without --client-issuer, is bound to: the issuer of the
// tokens kept for it (for t's server first), the first authorization
// server that issued it one. With none kept, the secret goes to whichever
// authorization server t's server names, and mcpcall says so.
func (c *cli) boundIssuer(t *target, clientID string) string {
	ctx := context.Background()
	a, err := auth.New(auth.Config{Store: c.tokenStore()})
	if err != nil {
		return ""
	}
	here, _ := a.Tokens(ctx, t.url)
	all, _ := a.Tokens(ctx, "")
	for _, entries := range [][]auth.Entry{here, all} {
		issuers := map[string]bool{}
		for _, e := range entries {
			if e.Token.ClientID == clientID {
				issuers[e.Key.Issuer] = true
			}
		}
		if len(issuers) == 1 {
			for is := range issuers {
				c.log.Debug("the client's secret is bound to the authorization server that issued its tokens", "client", clientID, "issuer", is)
				return is
			}
		}
		if len(issuers) > 1 {
			c.log.Warn(fmt.Sprintf("client %s has tokens from %d authorization servers and no --client-issuer: its secret goes to the one %s names", clientID, len(issuers), t.display))
			return ""
		}
	}
	c.log.Warn(fmt.Sprintf("client %s has a secret but no --client-issuer: its secret goes to the authorization server %s names, and is kept to the first one that issues it a token", clientID, t.display))
	return ""
}

// grant sets cfg's grant from --grant and --assertion-file. The assertion
// read from the file joins the secrets hidden in the output.
func (c *cli) grant(cfg *auth.Config) error {
	name := c.f.grant
	if name == "" && c.f.assertionFile != "" {
		name = auth.GrantJWTBearer.String()
	}
	switch name {
	case "", auth.GrantAuthorizationCode.String():
		cfg.Grant = auth.GrantAuthorizationCode
	case auth.GrantClientCredentials.String():
		cfg.Grant = auth.GrantClientCredentials
	case auth.GrantJWTBearer.String():
		if c.f.assertionFile == "" {
			return usageErr("--grant jwt-bearer needs --assertion-file")
		}
		cfg.Grant = auth.GrantJWTBearer
		read := auth.AssertionFromFile(c.f.assertionFile)
		cfg.Assertion = func(ctx context.Context, r auth.AssertionRequest) (string, error) {
			a, err := read(ctx, r)
			c.sec.add(a)
			return a, err
		}
	default:
		return usageErr("--grant %s: want authorization_code, client_credentials or jwt-bearer", name)
	}
	if c.f.assertionFile != "" && cfg.Grant != auth.GrantJWTBearer {
		return usageErr("--assertion-file is for --grant jwt-bearer, not %s", name)
	}
	return nil
}

// newAuthorizer checks cfg: a configuration that cannot work is a usage
// error.
func newAuthorizer(cfg auth.Config) (*auth.Authorizer, error) {
	a, err := auth.New(cfg)
	var ce *auth.ConfigError
	if errors.As(err, &ce) {
		return nil, usageErr("%v", err)
	}
	return a, err
}

// hasAuthorization reports whether the target already sends credentials
// of the user's (-H, --bearer-env, the config's headers): then mcpcall
// does not authorize by itself.
func hasAuthorization(t *target) bool {
	for _, h := range t.header {
		if strings.EqualFold(h[0], "Authorization") {
			return true
		}
	}
	return false
}

// loginCommand is the mcpcall auth login line that authorizes t, with the
// client flags of this run.
func (c *cli) loginCommand(t *target) string {
	parts := []string{"mcpcall", "auth", "login"}
	if c.f.clientID != "" {
		parts = append(parts, "--client-id", shellQuote(c.f.clientID))
	}
	if c.f.clientSecretEnv != "" {
		parts = append(parts, "--client-secret-env", shellQuote(c.f.clientSecretEnv))
	}
	if c.f.clientIssuer != "" {
		parts = append(parts, "--client-issuer", shellQuote(c.f.clientIssuer))
	}
	if c.f.clientMetadataURL != "" {
		parts = append(parts, "--client-metadata-url", shellQuote(c.f.clientMetadataURL))
	}
	for _, s := range c.f.scopes {
		parts = append(parts, "--scope", shellQuote(s))
	}
	return strings.Join(append(parts, c.targetWords(t)...), " ")
}

// logoutCommand is the mcpcall auth logout line that forgets t's tokens.
func (c *cli) logoutCommand(t *target) string {
	parts := []string{"mcpcall", "auth", "logout"}
	return strings.Join(append(parts, c.targetWords(t)...), " ")
}

// targetWords are the last words of an mcpcall line that names t as the
// user did: a config file's server by name (with --config when one was
// given), else its URL; each quoted for a POSIX shell.
func (c *cli) targetWords(t *target) []string {
	switch {
	case t.name != "" && c.f.config != "":
		return []string{"--config", shellQuote(c.f.config), shellQuote(t.name)}
	case t.name != "":
		return []string{shellQuote(t.name)}
	}
	return []string{shellQuote(t.url)}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// login runs the interactive authorization for t: the browser has wait
// to come back, the token endpoint then has its own time
// (auth.Config.ExchangeTimeout), and the whole login is bounded by both
// and --connect-timeout for the rest (discovery, registration). port is
// the redirect listener's (--callback-port): 0 for any free one, < 0 for
// the config entry's, else any.
func (c *cli) login(ctx context.Context, t *target, noBrowser bool, wait time.Duration, port int) error {
	cfg, err := c.authConfig(t)
	if err != nil {
		return err
	}
	cfg.ExchangeTimeout = c.exchangeTimeout
	limit := wait + cmp.Or(cfg.ExchangeTimeout, 30*time.Second) + c.f.connectTimeout
	ctx, cancel := context.WithTimeoutCause(ctx, limit, errLoginTimeout)
	defer cancel()
	from := "--callback-port"
	if port < 0 {
		port, from = 0, "the config entry's callbackPort"
		if t.oauth != nil && t.oauth.CallbackPort > 0 {
			port = t.oauth.CallbackPort
		}
	}
	var lb *auth.Loopback
	if port > 0 {
		if lb, err = auth.ListenLoopbackPort(ctx, port); err != nil {
			return fmt.Errorf("%s %d: %w", from, port, err)
		}
	} else if lb, err = auth.ListenLoopback(ctx); err != nil {
		return err
	}
	defer lb.Close()
	var tr *tracer
	if c.f.trace != "" {
		if tr, err = openTrace(c.f.trace, c.stderr, c.sec); err != nil {
			return err
		}
		defer tr.Close()
	}
	cfg.HTTPClient = &http.Client{Transport: &roundTripper{base: http.DefaultTransport, t: tr}}
	cfg.RedirectURL = lb.RedirectURL()
	cfg.Authorize = func(ctx context.Context, authURL string) (string, error) {
		showAuthorization(c.stderr, c.f.json, authURL, lb.RedirectURL())
		if !noBrowser && c.desktop() {
			if err := c.openBrowser(ctx, authURL); err != nil {
				c.log.Warn("could not open a browser; open the URL yourself", "err", err)
			}
		}
		return waitForBrowser(ctx, lb, wait)
	}
	a, err := newAuthorizer(cfg)
	if err != nil {
		return err
	}
	c.run.lastURL = t.url
	tok, err := a.Login(ctx, t.url)
	if err != nil {
		if errors.Is(context.Cause(ctx), errLoginTimeout) && !errors.Is(err, errBrowserTimeout) && !errors.As(err, new(*auth.ExchangeTimeoutError)) {
			return fmt.Errorf("logging in to %s: not done within %s: %w", t.display, limit, err)
		}
		return fmt.Errorf("logging in to %s: %w", t.display, err)
	}
	entries, err := a.Tokens(ctx, t.url)
	if err != nil {
		return err
	}
	var issuer string
	for _, e := range entries {
		if e.Token.AccessToken == tok.AccessToken {
			issuer = e.Key.Issuer
		}
	}
	if c.f.json {
		return json.NewEncoder(c.stdout).Encode(map[string]any{"server": origin.RedactString(t.url), "issuer": issuer, "token": tokenView(tok), "store": c.tokenStore().Path()})
	}
	fmt.Fprintf(c.stdout, "logged in to %s at %s: %s\n", t.display, issuer, describeToken(tok))
	return nil
}

// showAuthorization tells the person where to authorize. The URL comes
// from the authorization server's metadata: whatever in it is not
// printable (a terminal escape, a right-to-left override) is written
// escaped, never raw (the auth package refuses such endpoints already;
// this holds if another path lets one through).
func showAuthorization(w io.Writer, jsonOut bool, authURL, redirect string) {
	if jsonOut {
		b, _ := json.Marshal(map[string]string{"authorize": authURL, "redirect": redirect})
		fmt.Fprintf(w, "%s\n", escapeUnprintable(b))
		return
	}
	fmt.Fprintf(w, "Open this URL in a browser to authorize mcpcall:\n\n  %s\n\nWaiting for the browser to come back to %s (Ctrl-C to give up)...\n", shown(authURL), shown(redirect))
}

// escapeUnprintable writes each character of the JSON text b that is not
// printable (strconv.IsPrint) as a \uXXXX escape: outside strings JSON
// has none, and inside one the escape means the same character.
func escapeUnprintable(b []byte) []byte {
	if printable(string(b)) {
		return b
	}
	var out bytes.Buffer
	for _, r := range string(b) {
		switch {
		case strconv.IsPrint(r):
			out.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&out, "\\u%04x", r)
		}
	}
	return out.Bytes()
}

// errBrowserTimeout is the error of a browser that did not come back
// within --wait; errLoginTimeout the cause of the whole login's deadline.
var (
	errBrowserTimeout = errors.New("the browser did not come back in time")
	errLoginTimeout   = errors.New("the login's time ran out")
)

// waitForBrowser waits, within wait, for the browser to come back to lb.
// Running out of time is errBrowserTimeout, which also matches
// context.DeadlineExceeded.
func waitForBrowser(ctx context.Context, lb *auth.Loopback, wait time.Duration) (string, error) {
	wctx, cancel := context.WithTimeoutCause(ctx, wait, errBrowserTimeout)
	defer cancel()
	back, err := lb.Wait(wctx)
	if err != nil && errors.Is(context.Cause(wctx), errBrowserTimeout) && ctx.Err() == nil {
		return "", fmt.Errorf("%w (--wait %s): %w", errBrowserTimeout, wait, context.DeadlineExceeded)
	}
	return back, err
}

// desktop reports whether a browser can be opened here.
func (c *cli) desktop() bool {
	switch c.places.GOOS {
	case "darwin", "windows":
		return true
	}
	return c.getenv("DISPLAY") != "" || c.getenv("WAYLAND_DISPLAY") != ""
}

// openURL opens u in the desktop's browser.
func openURL(ctx context.Context, u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", u)
	case "windows":
		cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.CommandContext(ctx, "xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // the opener exits by itself; its status says nothing about the browser
	return nil
}

// tokenView is a token as --json shows it: never the token itself.
func tokenView(t *auth.Token) map[string]any {
	v := map[string]any{"refreshable": t.RefreshToken != "", "obtained": t.Obtained, "scopes": t.Scopes}
	if !t.Expiry.IsZero() {
		v["expiry"] = t.Expiry
		v["expired"] = t.Expired(time.Now())
	}
	if len(t.Granted) > 0 {
		v["granted"] = t.Granted
	}
	return v
}

func describeToken(t *auth.Token) string {
	var parts []string
	switch {
	case t.Expiry.IsZero():
		parts = append(parts, "no expiry")
	case t.Expired(time.Now()):
		parts = append(parts, "expired "+t.Expiry.Local().Format(time.DateTime))
	default:
		parts = append(parts, "expires "+t.Expiry.Local().Format(time.DateTime))
	}
	if t.RefreshToken != "" {
		parts = append(parts, "refreshable")
	}
	if len(t.Scopes) > 0 {
		parts = append(parts, "scopes "+strings.Join(t.Scopes, " "))
	}
	return strings.Join(parts, ", ")
}

// printTokens lists stored tokens.
func (c *cli) printTokens(entries []auth.Entry) error {
	if c.f.json {
		list := make([]map[string]any, 0, len(entries))
		for _, e := range entries {
			list = append(list, map[string]any{"resource": e.Key.Resource, "issuer": e.Key.Issuer, "token": tokenView(e.Token)})
		}
		return json.NewEncoder(c.stdout).Encode(map[string]any{"tokens": list, "store": c.tokenStore().Path()})
	}
	if len(entries) == 0 {
		fmt.Fprintf(c.stdout, "no tokens kept (in %s)\n", c.tokenStore().Path())
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RESOURCE\tISSUER\tTOKEN")
	for _, e := range entries {
		fmt.Fprintf(w, "%s\t%s\t%s\n", e.Key.Resource, e.Key.Issuer, describeToken(e.Token))
	}
	return w.Flush()
}
