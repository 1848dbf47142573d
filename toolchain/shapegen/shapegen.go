// Package shapegen turns Go types into the TypeScript shape tables the readers decode with
// (policy/sources/docker/shape.ts), the way encoding/json (or, with JSONLeaves, sigs.k8s.io/json) decodes them: each
// struct's fields by their JSON names, embedded structs promoted, pointers, lists, maps, fixed arrays, and values
// with their own text (or JSON) decoding as leaves. It imports nothing but the standard library, so that every
// generator module (toolchain/schemas, toolchain/crds) shares it whatever versions of the engines' packages each
// pins.
package shapegen

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

var (
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

// Gen collects the named struct shapes a table needs, in dependency order.
type Gen struct {
	Order []string          // named struct constants in dependency order
	Defs  map[string]string // constant name -> TypeScript expression
	busy  map[string]bool
	Roots []string // the root expressions written, for Imports
	// JSONLeaves: a type with its own UnmarshalJSON (resource.Quantity, intstr.IntOrString, metav1.Time) is a leaf
	// decoded by that type, as text(type) (the Kubernetes tables).
	JSONLeaves bool
	// Leaf, when set, may name a type as a leaf expression of its own (a CRD's core Kubernetes types).
	Leaf func(t reflect.Type) (string, bool)
	// Name, when set, names a struct's constant in place of ConstName (tables of several packages whose last path
	// elements agree).
	Name func(t reflect.Type) string
	// Cycle, when set, is the expression written where a struct holds a struct it is inside of (Tekton's pipeline
	// task holds a pipeline spec); when empty, such a type panics. The tables judge those fields whole.
	Cycle string
}

// New returns an empty generator.
func New(jsonLeaves bool) *Gen {
	return &Gen{Defs: map[string]string{}, busy: map[string]bool{}, JSONLeaves: jsonLeaves}
}

// ConstName is the TypeScript constant a named struct is written under: its package's last element and its name.
func ConstName(t reflect.Type) string {
	pkg := t.PkgPath()
	pkg = pkg[strings.LastIndex(pkg, "/")+1:]
	return regexp.MustCompile(`[^A-Za-z0-9]`).ReplaceAllString(pkg, "") + "_" + t.Name()
}

// jsonName is the field's JSON key and whether encoding/json decodes it at all.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// Shape is the TypeScript shape expression of a type; named structs become constants (Order, Defs).
func (g *Gen) Shape(t reflect.Type) string {
	if g.Leaf != nil {
		if s, ok := g.Leaf(t); ok {
			return s
		}
	}
	// encoding/json hands a JSON text to a type's own UnmarshalText (netip.Addr, HardwareAddr).
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshaler) {
		return fmt.Sprintf("text(%q)", t.String())
	}
	if g.JSONLeaves && t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return fmt.Sprintf("text(%q)", t.String())
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int64:
		return "int64"
	case reflect.Int8:
		return "int8"
	case reflect.Int16:
		return "int16"
	case reflect.Int32:
		return "int32"
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return "uint64"
	case reflect.Uint8:
		return "uint8"
	case reflect.Uint16:
		return "uint16"
	case reflect.Uint32:
		return "uint32"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.Pointer:
		return "ptr(" + g.Shape(t.Elem()) + ")"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "slice(" + g.Shape(t.Elem()) + ")"
	case reflect.Array:
		return fmt.Sprintf("array(%d, %s)", t.Len(), g.Shape(t.Elem()))
	case reflect.Map:
		// A key type with its own text decoding (network.Port) is parsed, and may refuse the body.
		if k := t.Key(); k.Kind() != reflect.String && reflect.PointerTo(k).Implements(textUnmarshaler) {
			return fmt.Sprintf("map(%s, %q)", g.Shape(t.Elem()), k.String())
		}
		return "map(" + g.Shape(t.Elem()) + ")"
	case reflect.Interface:
		return "any"
	case reflect.Struct:
		if t.Name() == "" {
			return g.StructExpr(t)
		}
		c := ConstName(t)
		if g.Name != nil {
			c = g.Name(t)
		}
		if _, ok := g.Defs[c]; ok {
			return c
		}
		if g.busy[c] {
			if g.Cycle != "" {
				return g.Cycle
			}
			panic("recursive type " + t.String())
		}
		g.busy[c] = true
		g.Defs[c] = g.StructExpr(t)
		g.Order = append(g.Order, c)
		return c
	}
	panic("unhandled kind " + t.String())
}

// StructExpr lists a struct's fields as encoding/json sees them: promoted embedded fields first flattened (Go's
// rules: a field at a shallower depth wins; two at the same depth cancel), then its own.
func (g *Gen) StructExpr(t reflect.Type) string {
	type fld struct {
		name  string
		depth int
		expr  string
	}
	var all []fld
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			ft := f.Type
			// encoding/json (and sigs.k8s.io/json) promote an embedded struct whose tag gives no name (`json:",inline"`).
			if f.Anonymous && (f.Tag.Get("json") == "" || (g.JSONLeaves && name == f.Name)) {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					walk(et, depth+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			all = append(all, fld{name, depth, g.Shape(ft)})
		}
	}
	walk(t, 0)
	best := map[string]int{}
	count := map[string]int{}
	for _, f := range all {
		if d, ok := best[f.name]; !ok || f.depth < d {
			best[f.name] = f.depth
			count[f.name] = 0
		}
		if best[f.name] == f.depth {
			count[f.name]++
		}
	}
	var b strings.Builder
	b.WriteString("struct({")
	seen := map[string]bool{}
	for _, f := range all {
		if seen[f.name] || best[f.name] != f.depth || count[f.name] != 1 {
			continue
		}
		seen[f.name] = true
		fmt.Fprintf(&b, " %s: %s,", TSKey(f.name), f.expr)
	}
	b.WriteString(" })")
	return b.String()
}

var ident = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func TSKey(k string) string {
	if ident.MatchString(k) {
		return k
	}
	return fmt.Sprintf("%q", k)
}

// helpers are the shape helpers a table may import from shape.ts, in the order biome sorts them.
var helpers = []string{"any", "array", "bool", "bytes", "core", "float", "int8", "int16", "int32", "int64", "map", "ptr", "slice", "string", "struct", "text", "uint8", "uint16", "uint32", "uint64"}

// Imports names the shape helpers the tables use (the constants and the roots, and any more expressions given), in
// the order biome sorts them.
func (g *Gen) Imports(more ...string) string {
	var all strings.Builder
	for _, c := range g.Order {
		all.WriteString(g.Defs[c] + " ")
	}
	for _, r := range g.Roots {
		all.WriteString(r + " ")
	}
	for _, m := range more {
		all.WriteString(m + " ")
	}
	var used []string
	for _, h := range helpers {
		if regexp.MustCompile(`(^|[^A-Za-z0-9_])` + h + `([^A-Za-z0-9_]|$)`).MatchString(all.String()) {
			used = append(used, h)
		}
	}
	return strings.Join(used, ", ")
}
