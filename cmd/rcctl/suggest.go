package main

// Cobra's "did you mean" suggestions for a mistyped command. Cobra makes
// them only in its own refusal of an unknown command, which rcctl replaces
// (the root and rollout check their arguments themselves, so that a
// mistake is a one-line usage error): the suggestions are asked of cobra
// (Command.SuggestionsFor: Levenshtein distance up to 2, prefixes, and each
// command's SuggestFor) and put into that line.

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// unknownCommandOf is the error for name, which is not a subcommand of
// parent, with cobra's suggestions; see is the help to point to.
func unknownCommandOf(parent *cobra.Command, name, see string) error {
	prefix := ""
	if parent.HasParent() {
		prefix = commandName(parent) + ": "
	}
	return usageErrorf("%sunknown command %q%s (see %s)", prefix, name, didYouMean(parent, name), see)
}

// didYouMean is `; did you mean "get"?` for the subcommands of parent that
// cobra suggests for name, or "".
func didYouMean(parent *cobra.Command, name string) string {
	if parent.SuggestionsMinimumDistance <= 0 {
		parent.SuggestionsMinimumDistance = 2 // cobra's default, which it sets only on its own path
	}
	suggestions := parent.SuggestionsFor(name)
	if len(suggestions) == 0 {
		return ""
	}
	quoted := make([]string, len(suggestions))
	for i, s := range suggestions {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return "; did you mean " + strings.Join(quoted, " or ") + "?"
}
