package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/pin"
)

// pinsCommand is mcpcall pins: the tools bridge --all pinned.
func (c *cli) pinsCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "pins",
		Short: "List, approve or forget the tool definitions bridge --all pinned",
		Long: `bridge --all pins each tool's definition the first time it sees it, under the
key SERVER/TOOL, in a pin file (default: anymcp/pins.json in the user's
configuration directory). A tool whose definition changed is held back until
it is approved again: mcpcall pins approve KEY connects to the servers of the
config files, lists their tools, and pins the definition listed now.`,
	}
	cmd.PersistentFlags().StringVar(&file, "file", "", "the pin `FILE` (default: anymcp/pins.json in the user's configuration directory)")
	path := func() (string, error) {
		if file != "" {
			return file, nil
		}
		return c.defaultPinFile()
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the pinned tools: key, fingerprint, when approved",
		Args:  cobra.NoArgs,
		RunE: c.runE(func(cmd *cobra.Command, _ []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			recs, err := pin.File(p).Load(cmd.Context())
			if err != nil {
				return fmt.Errorf("pins: %w", err)
			}
			if c.f.json {
				out := map[string]any{"file": p, "pins": recs}
				if recs == nil {
					out["pins"] = map[string]pin.Record{}
				}
				return json.NewEncoder(c.stdout).Encode(out)
			}
			fmt.Fprintf(c.stderr, "pin file: %s\n", p)
			for _, k := range slices.Sorted(maps.Keys(recs)) {
				fmt.Fprintf(c.stdout, "%s\t%s\t%s\n", k, recs[k].Fingerprint, recs[k].Approved.UTC().Format(time.RFC3339))
			}
			return nil
		}),
	}
	var allHeld bool
	approve := &cobra.Command{
		Use:   "approve KEY... | --all-held",
		Short: "Approve the definitions listed now of tools held back",
		Args: func(_ *cobra.Command, args []string) error {
			if allHeld == (len(args) > 0) {
				return usageErr("pins approve: give the keys of the tools to approve, or --all-held")
			}
			return nil
		},
		RunE: c.runE(func(cmd *cobra.Command, args []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			return c.approvePins(cmd.Context(), p, args, allHeld)
		}),
	}
	approve.Flags().BoolVar(&allHeld, "all-held", false, "approve every tool held back")
	c.addFlags(approve, "config", "era", "protocol-version", "connect-timeout", "timeout", "max-time")
	forget := &cobra.Command{
		Use:   "forget KEY...",
		Short: "Forget pins: the next definition seen is trusted on first use",
		Args:  cobra.MinimumNArgs(1),
		RunE: c.runE(func(cmd *cobra.Command, args []string) error {
			p, err := path()
			if err != nil {
				return err
			}
			ps := pin.New(pin.File(p))
			recs, err := pin.File(p).Load(cmd.Context())
			if err != nil {
				return fmt.Errorf("pins: %w", err)
			}
			for _, k := range args {
				if _, ok := recs[k]; !ok {
					return usageErr("pins forget: %s is not pinned in %s", k, p)
				}
				if err := ps.Forget(cmd.Context(), k); err != nil {
					return fmt.Errorf("pins: %w", err)
				}
				fmt.Fprintf(c.stderr, "forgot %s\n", k)
			}
			return nil
		}),
	}
	cmd.AddCommand(list, approve, forget)
	return cmd
}

// approvePins lists the fleet's tools through the pins of file and
// approves the held ones named by keys (all with allHeld).
func (c *cli) approvePins(ctx context.Context, file string, keys []string, allHeld bool) error {
	run, servers, err := c.fleetServers(nil, false)
	if err != nil {
		return err
	}
	ps := pin.New(pin.File(file))
	f, err := fleet.New(servers, append(c.fleetOptions(), fleet.WithPins(ps))...)
	if err != nil {
		return usageErr("%v", err)
	}
	run.f = f
	defer run.close()
	cat, err := f.Tools(ctx)
	if err != nil {
		return err
	}
	held := map[string]*pin.ChangedError{}
	for _, e := range cat.Errors {
		if e.Kind != fleet.KindHeld {
			continue
		}
		for _, ce := range heldErrors(e.Err) {
			held[ce.Key] = ce
		}
	}
	if allHeld {
		keys = slices.Sorted(maps.Keys(held))
		if len(keys) == 0 {
			fmt.Fprintln(c.stderr, "no tool is held back")
		}
	}
	for _, k := range keys {
		if _, ok := held[k]; !ok {
			return usageErr("pins approve: %s is not held back (mcpcall pins list shows the pinned tools)", k)
		}
	}
	for _, k := range keys {
		if err := ps.Approve(ctx, k, held[k].Definition); err != nil {
			return fmt.Errorf("pins: approving %s: %w", k, err)
		}
		fmt.Fprintf(c.stderr, "approved %s: %s\n", k, held[k].Fingerprint)
	}
	return nil
}
