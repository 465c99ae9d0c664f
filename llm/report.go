package llm

// Mode is how a tool reaches the model.
type Mode string

const (
	ModeStrict  Mode = "strict"  // in the provider's strict mode, as asked
	ModeLoose   Mode = "loose"   // without strict mode: not asked, or not possible (see the report)
	ModeOmitted Mode = "omitted" // not sent: no valid definition could be made (see the report)
)

// Change is one thing the conversion did to a tool, and why.
type Change struct {
	// Path says where: "" for the tool itself (its name, its
	// description); "#" and a JSON Pointer for a place in the tool's
	// original input schema ("#" is its root, "#/properties/q" a
	// property); for a repair of arguments (Shape), a JSON Pointer into
	// the arguments.
	Path string `json:"path"`
	// Action is what was done: one of the Action constants.
	Action Action `json:"action"`
	// Why says so in words, for a person reading the report.
	Why string `json:"why"`
}

// Action is the kind of a Change.
type Action string

// The actions a conversion reports.
const (
	Inlined          Action = "inlined"           // a $ref replaced by what it points to
	Merged           Action = "merged"            // allOf members merged into one schema
	Rewritten        Action = "rewritten"         // spelled as the target spells it (type arrays, nullable, const)
	Dropped          Action = "dropped"           // a keyword the target refuses, removed
	Moved            Action = "moved"             // a keyword moved into the description
	Truncated        Action = "truncated"         // a description or name cut to the target's limit
	Renamed          Action = "renamed"           // the tool's name changed to fit the target
	MadeRequired     Action = "made-required"     // strict mode: an optional property made required and nullable
	Closed           Action = "closed"            // strict mode: additionalProperties: false added
	RecursionBounded Action = "recursion-bounded" // a recursive $ref cut at the depth limit
	FellBack         Action = "fell-back"         // strict asked, loose sent
	Omitted          Action = "omitted"           // the tool is not sent

	// Repairs that Shape makes to a model's arguments (Path points into them).
	RemovedNull  Action = "removed-null"  // a null the original schema refuses on an optional property, left out
	ParsedString Action = "parsed-string" // a JSON string where an object or array belongs, parsed
)
