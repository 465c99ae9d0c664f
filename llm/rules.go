package llm

// rules are one provider's documented limits on a tool definition, as
// data: the converter reads them to decide what to change, and the
// checker (Check) reads the same table to refuse what the provider would.
// docs/llm.md lists each rule with the page it comes from.
type rules struct {
	// names: the characters a tool name may hold, whether its first
	// character must be a letter or "_", and its length in bytes.
	nameChars   func(c byte) bool
	nameStart   bool
	nameMax     int
	descMax     int // tool description, in characters; 0: no documented limit
	maxTools    int // tools in one request; 0: no documented limit
	hasStrict   bool
	loose       *schemaRules
	strict      *schemaRules // nil when the provider has no per-tool strict mode
	describeOut string       // how the docs name the target
}

// schemaRules are the rules for the parameters schema in one mode.
type schemaRules struct {
	// keep lists the keywords the target takes; any other is dropped, or
	// moved into the description when it constrains the value.
	keep map[string]bool
	// whitelist: the target refuses a keyword outside keep (its
	// documented list, or a typed schema message); without it, the target
	// ignores what it does not know, and Check lets it pass.
	whitelist bool
	// refs: $ref into the schema's own $defs is taken, so references are
	// kept (a recursive schema stays recursive). Without it they are
	// inlined and recursion is unrolled to maxUnroll levels.
	refs bool
	// recursion: a $ref may refer to itself, directly or not.
	recursion bool
	// typeArrays: "type" may be a list; without it, one type, and null is
	// spelled "nullable": true where nullable is set.
	typeArrays bool
	nullable   bool
	// enumStrings: enum only on strings, of strings (OpenAPI subset).
	enumStrings bool
	// constOK: "const" is taken; without it a const becomes a one-value enum.
	constOK bool
	// rootNoAlternatives: the root may not be anyOf/oneOf/allOf.
	rootNoAlternatives bool
	// rootProperties: the root must list its properties (an empty list
	// will do).
	rootProperties bool
	// noEmptyParameters: a tool without parameters leaves the schema out
	// (OpenAPI subset: an object needs at least one property).
	noEmptyParameters bool
	// enumPrimitives: enum values may not be objects or arrays.
	enumPrimitives bool
	// nonEmptyObjects: an object must list properties, an array must
	// have items (OpenAPI subset); a free-form value becomes a string
	// holding JSON, which Shape parses back.
	nonEmptyObjects bool
	// arrayItems: an array must say what its items are.
	arrayItems bool
	// closed: every object must have additionalProperties: false and,
	// with allRequired, list every property as required.
	closed      bool
	allRequired bool
	// typed: every schema must say what it takes (type, enum, const,
	// anyOf or $ref): strict decoding has no "any value".
	typed bool
	// formats the target takes, by type ("" for any type); nil: any.
	formats map[string]map[string]bool
	// minItemsMax: the largest minItems taken; -1: no limit.
	minItemsMax int
	// limits on the whole schema; 0: none documented.
	maxDepth, maxProperties, maxEnumValues, maxStringChars int
	// a single enum of more than largeEnum values may hold at most
	// largeEnumChars characters.
	largeEnum, largeEnumChars int
	// lengthBoundMax: minLength/maxLength/minItems/maxItems above this are
	// moved into the description (grammar engines that expand them).
	lengthBoundMax int
}

// maxUnroll is how many times a recursive schema is inlined inside itself
// for a target that cannot refer to it: after that, the value is described
// and taken as JSON text (RecursionBounded).
const maxUnroll = 2

// maxNodes bounds the schema nodes one conversion may write; past
// maxInlineNodes a reference is no longer inlined but cut (its value taken
// as JSON text or any value): a schema whose references fan out would
// otherwise grow exponentially as inlined. The largest real schema of the
// corpus (Notion's) inlines to about 3 KB, a few hundred nodes.
const (
	maxNodes       = 20_000
	maxInlineNodes = 2_000
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// openAINameChar is [A-Za-z0-9_-]: OpenAI, Anthropic and the servers that
// copy OpenAI's API.
func openAINameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// geminiNameChar adds "." to it; a name also starts with a letter or "_".
// (The Gemini API's own page also allows ":", Vertex AI's did not: the
// narrower set is taken.)
func geminiNameChar(c byte) bool { return openAINameChar(c) || c == '.' }

// allKeywords are the JSON Schema keywords tool schemas use that a
// liberal target takes as they are.
var allKeywords = set("type", "properties", "required", "items", "prefixItems", "additionalItems",
	"additionalProperties", "patternProperties", "propertyNames", "anyOf", "oneOf", "not",
	"if", "then", "else", "$ref", "$defs", "enum", "const", "description", "title", "default",
	"examples", "format", "pattern", "minLength", "maxLength", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
	"minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "contains",
	"minContains", "maxContains", "deprecated", "readOnly", "writeOnly", "contentMediaType",
	"contentEncoding")

var openAIStrictFormats = map[string]map[string]bool{"": set("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")}

var openAILoose = &schemaRules{
	keep: allKeywords, refs: true, recursion: true, typeArrays: true, constOK: true,
	rootNoAlternatives: true, rootProperties: true, arrayItems: true, minItemsMax: -1,
}

var openAIStrict = &schemaRules{
	whitelist: true,
	keep: set("type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const",
		"description", "$ref", "$defs", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
		"exclusiveMaximum", "multipleOf", "minItems", "maxItems"),
	refs: true, recursion: true, typeArrays: true, constOK: true, rootNoAlternatives: true,
	rootProperties: true, enumPrimitives: true,
	arrayItems: true, closed: true, allRequired: true, typed: true, formats: openAIStrictFormats,
	minItemsMax: -1, maxDepth: 10, maxProperties: 5000, maxEnumValues: 1000, maxStringChars: 120_000,
	largeEnum: 250, largeEnumChars: 15_000,
}

var anthropicLoose = &schemaRules{
	keep: allKeywords, refs: true, recursion: true, typeArrays: true, constOK: true,
	rootNoAlternatives: true, minItemsMax: -1,
}

var anthropicStrict = &schemaRules{
	whitelist: true,
	keep: set("type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const",
		"description", "title", "$ref", "$defs", "format", "minItems"),
	refs: true, typeArrays: true, constOK: true, rootNoAlternatives: true, arrayItems: true,
	closed: true, typed: true, enumPrimitives: true,
	formats:     map[string]map[string]bool{"": set("date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid")},
	minItemsMax: 1,
}

var geminiJSON = &schemaRules{
	whitelist: true,
	keep: set("type", "format", "title", "description", "enum", "items", "prefixItems", "minItems", "maxItems",
		"minimum", "maximum", "anyOf", "oneOf", "properties", "additionalProperties", "required", "$ref", "$defs"),
	refs: true, recursion: true, typeArrays: true, rootNoAlternatives: true, rootProperties: true,
	minItemsMax: -1,
}

var geminiOpenAPI = &schemaRules{
	whitelist: true,
	keep: set("type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties",
		"required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "anyOf", "default",
		"items", "minimum", "maximum"),
	nullable: true, enumStrings: true, rootNoAlternatives: true, nonEmptyObjects: true, arrayItems: true,
	rootProperties: true, noEmptyParameters: true, enumPrimitives: true,
	formats: map[string]map[string]bool{
		"string": set("enum", "date-time"), "number": set("float", "double"), "integer": set("int32", "int64"),
	},
	minItemsMax: -1,
}

var openAICompatible = &schemaRules{
	keep: set("type", "properties", "required", "items", "prefixItems", "additionalProperties", "anyOf", "oneOf",
		"enum", "const", "description", "title", "default", "minimum", "maximum", "minItems", "maxItems",
		"minLength", "maxLength", "format"),
	typeArrays: true, constOK: true, rootNoAlternatives: true, rootProperties: true, arrayItems: true,
	formats:     map[string]map[string]bool{"": set("date", "time", "date-time", "uuid")},
	minItemsMax: -1, lengthBoundMax: 1000,
}

// providers is the table the converter and the checker consult.
var providers = map[Provider]*rules{
	OpenAIChat: {nameChars: openAINameChar, nameMax: 64, descMax: 1024, maxTools: 128,
		hasStrict: true, loose: openAILoose, strict: openAIStrict, describeOut: "OpenAI Chat Completions"},
	OpenAIResponses: {nameChars: openAINameChar, nameMax: 64, descMax: 1024, maxTools: 128,
		hasStrict: true, loose: openAILoose, strict: openAIStrict, describeOut: "OpenAI Responses"},
	Anthropic: {nameChars: openAINameChar, nameMax: 64,
		hasStrict: true, loose: anthropicLoose, strict: anthropicStrict, describeOut: "Anthropic Messages"},
	Gemini: {nameChars: geminiNameChar, nameStart: true, nameMax: 64,
		loose: geminiJSON, describeOut: "Gemini (parametersJsonSchema)"},
	GeminiOpenAPI: {nameChars: geminiNameChar, nameStart: true, nameMax: 64,
		loose: geminiOpenAPI, describeOut: "Gemini (parameters, OpenAPI subset)"},
	OpenAICompatible: {nameChars: openAINameChar, nameMax: 64,
		loose: openAICompatible, describeOut: "OpenAI-compatible (Ollama, vLLM, llama.cpp)"},
}

// rulesFor returns the provider's rules; an unknown provider gets the
// OpenAI-compatible ones, the narrowest common form.
func rulesFor(p Provider) *rules {
	if r, ok := providers[p]; ok {
		return r
	}
	return providers[OpenAICompatible]
}

// validation keywords: moved into the description when the target drops
// them, so that the model still reads the constraint.
var constraintWords = set("format", "pattern", "minLength", "maxLength", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
	"minProperties", "maxProperties", "default", "examples", "propertyNames", "dependentRequired",
	"contains", "minContains", "maxContains", "deprecated", "readOnly", "writeOnly")
