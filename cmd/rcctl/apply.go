package main

// apply writes specs from files, directories or stdin (applyinput.go): it creates a controller that does
// not exist and replaces one that does, but only if nobody changed it since
// it was read (a ModRevision compare), so that it never overwrites someone
// else's edit. Every spec is decoded and validated, against the published
// policy too (policy.go), before anything is written; an invalid one
// writes nothing. The writes go in one transaction
// (registry.WriteControllers): a conflict on any one writes none.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replication-manager/replication-manager/api"
	"github.com/replication-manager/replication-manager/registry"
)

func (c *cli) applyCommand() *cobra.Command {
	var filenames []string
	var dryRun bool
	var wait waitFlags
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR|- [-f ...]",
		Short: "create or update controllers from JSON or YAML files",
		Long: `Apply creates the controller if it does not exist and replaces its spec if it
does. Every spec is validated first, against the policy the leading manager
published too (what its --allow-* flags and --max-replicas accept); if any is
invalid or refused, nothing is written. All of them are then written in one
etcd transaction, which goes in only if no controller changed since apply read
it: if someone changed one, none is written. A spec that is as stored is
reported unchanged and not written. One call takes at most 128 controllers,
the most one etcd transaction holds by default.

-f may be given several times. Each is a file, - for stdin, or a directory,
whose .json, .yaml and .yml files are read in name order (not those of its
subdirectories). A file holds one JSON document, or YAML documents separated by
--- lines; each document is one controller, or {"items": [...]} as printed by
'rcctl get -o json', each item as strictly decoded as one controller. The
"currentState" that 'rcctl get -o json|yaml' prints beside a spec is ignored.
Each file may be at most 256 KiB, and each controller may appear once.

With --wait it then shows progress until every replica is ready or --timeout passes.
With --dry-run it validates, then prints what the registry would do to each
container if the spec were written (created, replaced, moved, removed), and
on which node, as the leader would decide it from the assignments, the nodes
and their reports in etcd; it writes nothing and needs no Docker.`,
		ValidArgsFunction: cobra.NoFileCompletions, // the files are -f's
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(filenames) == 0 {
				return usageErrorf("apply: -f FILE, -f DIR or -f - is required")
			}
			if len(args) > 0 {
				return usageErrorf("apply: unexpected arguments %q (the specs come from -f)", args)
			}
			if dryRun && *wait.wait {
				return usageErrorf("apply: --dry-run writes nothing to wait for; drop --wait")
			}
			return c.apply(cmd.Context(), filenames, dryRun, wait)
		},
	}
	cmd.Flags().StringArrayVarP(&filenames, "filename", "f", nil, "file or directory with controller specs, JSON or YAML; - reads stdin; may be repeated")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, dryRunHelp)
	wait = addWaitFlags(cmd.Flags())
	return cmd
}

func (c *cli) apply(ctx context.Context, filenames []string, dryRun bool, wait waitFlags) error {
	docs, err := c.readApplyDocs(filenames)
	if err != nil {
		return err
	}
	if len(docs) > registry.MaxSpecsPerWrite {
		return fmt.Errorf("apply: %d controllers are more than the %d that one etcd transaction holds (etcd's --max-txn-ops default), and apply writes all of them or none; nothing written: apply them in several calls of at most %d",
			len(docs), registry.MaxSpecsPerWrite, registry.MaxSpecsPerWrite)
	}
	rcs := make([]*api.ReplicationController, len(docs))
	for i, d := range docs {
		if err := c.validateShape(d.rc, d.rc.ID); err != nil {
			return fmt.Errorf("%s: %w", d.source, invalid(d.rc.ID, "", err))
		}
		rcs[i] = d.rc
	}

	cn, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	for _, d := range docs {
		if err := c.validate(ctx, cn, d.rc, d.rc.ID); err != nil {
			return fmt.Errorf("%s: %w", d.source, invalid(d.rc.ID, "", err))
		}
	}
	if dryRun {
		return c.applyDryRun(ctx, cn, rcs)
	}
	items := make([]applyItem, len(rcs))
	for i, rc := range rcs {
		items[i].rc = rc
		spec, err := cn.getController(ctx, rc.ID)
		switch {
		case err == nil:
			items[i].current = &spec
		case !errors.Is(err, registry.ErrNotFound):
			return err
		}
	}
	results, err := applyAll(ctx, cn, items)
	if err != nil {
		return err
	}
	for i, rc := range rcs {
		fmt.Fprintf(c.stdout, "controller %q %s\n", rc.ID, results[i])
	}
	for _, rc := range rcs {
		if err := c.waitAfterWrite(ctx, cn, rc.ID, wait); err != nil {
			return err
		}
	}
	return nil
}

// applyDryRun prints, for each controller, what apply would do to its spec
// and what the registry would then do to its containers; it writes
// nothing. Each controller's dry run is of its own spec over the registry
// as it is: the other items of a list count as not applied yet.
func (c *cli) applyDryRun(ctx context.Context, cn *conn, rcs []*api.ReplicationController) error {
	for _, rc := range rcs {
		result := "created"
		var current *registry.Spec
		spec, err := cn.getController(ctx, rc.ID)
		switch {
		case errors.Is(err, registry.ErrNotFound):
		case err != nil:
			return err
		case spec.Err != nil:
			current, result = &spec, "configured"
		default:
			current = &spec
			same, err := sameSpec(rc, spec.Controller)
			if err != nil {
				return err
			}
			result = "configured"
			if same {
				result = "unchanged"
			}
		}
		fmt.Fprintf(c.stdout, "controller %q %s (dry run)\n", rc.ID, result)
		if err := c.dryRun(ctx, cn, rc, current); err != nil {
			return err
		}
	}
	return nil
}

// applyItem is one controller to apply and what was read of its key:
// current is nil when the key did not exist.
type applyItem struct {
	rc      *api.ReplicationController
	current *registry.Spec
}

// applyAll writes every item in one etcd transaction that succeeds only
// if every key is still as read (registry.WriteControllers): a conflict on
// any one writes none. An item whose spec is as stored is compared and
// not written. It returns, item by item, what happened: created,
// configured or unchanged.
func applyAll(ctx context.Context, cn *conn, items []applyItem) ([]string, error) {
	results := make([]string, len(items))
	writes := make([]registry.SpecWrite, len(items))
	for i, it := range items {
		writes[i].Controller = it.rc
		results[i] = "created"
		if it.current == nil {
			continue
		}
		writes[i].ModRevision = it.current.ModRevision
		results[i] = "configured"
		if it.current.Err == nil {
			same, err := sameSpec(it.rc, it.current.Controller)
			if err != nil {
				return nil, err
			}
			if same {
				writes[i].Unchanged, results[i] = true, "unchanged"
			}
		}
	}
	_, err := call(ctx, cn, func(ctx context.Context) (int64, error) { return cn.store.WriteControllers(ctx, writes) })
	var conflict *registry.ConflictError
	switch {
	case errors.As(err, &conflict):
		return nil, conflictError(conflict)
	case errors.Is(err, registry.ErrTooManySpecs):
		return nil, fmt.Errorf("apply: %w; nothing written: apply them in several calls", err)
	case err != nil:
		return nil, err
	}
	return results, nil
}

// conflictError says which controllers changed since apply read them, each
// in a clause of its own, and that nothing was written.
func conflictError(e *registry.ConflictError) error {
	clauses := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		verb := "changed"
		if c.Now == 0 {
			verb = "deleted"
		}
		clauses[i] = fmt.Sprintf("controller %q was %s by someone else since it was read", c.ID, verb)
	}
	return fmt.Errorf("%s; nothing written, run apply again", strings.Join(clauses, "; "))
}

// sameSpec reports whether two specs encode to the same bytes.
func sameSpec(a, b *api.ReplicationController) (bool, error) {
	ea, err := api.Encode(a)
	if err != nil {
		return false, err
	}
	eb, err := api.Encode(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ea, eb), nil
}

// readInput reads a file, or stdin for "-", up to api.MaxSpecBytes, the
// most the manager accepts of one spec: a mistaken file (a log, a device)
// is refused without being read whole. A list counts as a whole: a longer
// one is applied in several files.
func (c *cli) readInput(filename string) ([]byte, error) {
	in, source := c.stdin, "stdin"
	if filename != "-" {
		f, err := os.Open(filename)
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		in, source = f, filename
	}
	data, err := io.ReadAll(io.LimitReader(in, api.MaxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", source, err)
	}
	if len(data) > api.MaxSpecBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes (%d KiB), the most a spec may be; apply a long list in several files (nothing written)",
			source, api.MaxSpecBytes, api.MaxSpecBytes>>10)
	}
	return data, nil
}

// decodeApply decodes one controller, or a list {"items": [...]} as
// 'rcctl get -o json|yaml' prints it, each item with api.Decode, which is
// as strict for an item as for one spec. Anything that is not such a list
// goes to api.Decode whole, so its errors are the decoder's.
func decodeApply(data []byte) ([]*api.ReplicationController, error) {
	items, isList, err := listItems(data)
	if err != nil {
		return nil, err
	}
	if isList {
		if len(items) == 0 {
			return nil, errors.New("the list has no items")
		}
		rcs := make([]*api.ReplicationController, 0, len(items))
		for i, item := range items {
			rc, err := decodeController(item)
			if err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
			rcs = append(rcs, rc)
		}
		return rcs, nil
	}
	rc, err := decodeController(data)
	if err != nil {
		return nil, err
	}
	return []*api.ReplicationController{rc}, nil
}

// listItems returns the items of a document whose only key is "items", as
// the JSON api.Decode reads. The document is converted as api.Decode
// converts one (api.ToJSON): YAML with a duplicate key is refused there,
// and JSON items are passed on as written, so that api.Decode sees and
// refuses their duplicate fields; "items" twice is an error. isList is
// false for any other document, including one ToJSON refuses: api.Decode
// then reports on it as on one spec, which is why errors here are absorbed.
//
//nolint:nilerr // a document that is not a list is reported by api.Decode
func listItems(data []byte) (items []json.RawMessage, isList bool, err error) {
	js, err := api.ToJSON(data)
	if err != nil {
		return nil, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, nil
	}
	seen := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil || key != "items" {
			return nil, false, nil
		}
		if seen {
			return nil, true, errors.New(`duplicate field "items"`)
		}
		seen = true
		if err := dec.Decode(&items); err != nil {
			return nil, false, nil
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, false, nil
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) { // data after the document
		return nil, false, nil
	}
	return items, seen, nil
}
