// The schema generator: turns the Engine API's own Go types (github.com/moby/moby/api, the version go.mod pins) into
// the TypeScript shape tables the readers decode request bodies with, the way the daemon's encoding/json does:
// each struct's fields by their JSON names, embedded structs promoted, pointers, lists, maps, fixed arrays, and
// values with their own text decoding (IP addresses, MAC addresses) as texts.
//
// It also lists every property of the Compose schema compose-go embeds (`go run . compose`), for the Compose
// reader's verdict table.
//
// Usage: go run . > ../../policy/sources/docker/schema.generated.ts  (or `npm run schemas`)
package main

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"runtime/debug"
	"strings"

	"encoding"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/api/types/plugin"
	"github.com/moby/moby/api/types/volume"
)

const module = "github.com/moby/moby/api"

// The bodies the project judges, by the name the TypeScript exports them under.
var roots = []struct {
	name, doc string
	t         reflect.Type
}{
	{"CONTAINER_CREATE", "`POST /containers/create`: container.CreateRequest (`*Config` promoted)", reflect.TypeOf(container.CreateRequest{})},
	{"NETWORK_CREATE", "`POST /networks/create`: network.CreateRequest", reflect.TypeOf(network.CreateRequest{})},
	{"VOLUME_CREATE", "`POST /volumes/create`: volume.CreateRequest", reflect.TypeOf(volume.CreateRequest{})},
	{"PLUGIN_CONFIG", "a plugin's `config.json` (`POST /plugins/create` reads it from the plugin's archive): plugin.Config", reflect.TypeOf(plugin.Config{})},
	{"PLUGIN_PRIVILEGES", "`POST /plugins/pull` and `/plugins/{name}/upgrade`: the privileges granted, []plugin.Privilege", reflect.TypeOf([]plugin.Privilege{})},
}

var textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

type gen struct {
	order []string          // named struct constants in dependency order
	defs  map[string]string // constant name -> TypeScript expression
	busy  map[string]bool
	roots []string
	// jsonLeaves: a type with its own UnmarshalJSON (resource.Quantity, intstr.IntOrString, metav1.Time) is a leaf
	// decoded by that type, as text(type) (the Kubernetes tables).
	jsonLeaves bool
}

func constName(t reflect.Type) string {
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

func (g *gen) shape(t reflect.Type) string {
	// encoding/json hands a JSON text to a type's own UnmarshalText (netip.Addr, HardwareAddr).
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshaler) {
		return fmt.Sprintf("text(%q)", t.String())
	}
	if g.jsonLeaves && t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(jsonUnmarshaler) {
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
		return "ptr(" + g.shape(t.Elem()) + ")"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "slice(" + g.shape(t.Elem()) + ")"
	case reflect.Array:
		return fmt.Sprintf("array(%d, %s)", t.Len(), g.shape(t.Elem()))
	case reflect.Map:
		// A key type with its own text decoding (network.Port) is parsed, and may refuse the body.
		if k := t.Key(); k.Kind() != reflect.String && reflect.PointerTo(k).Implements(textUnmarshaler) {
			return fmt.Sprintf("map(%s, %q)", g.shape(t.Elem()), k.String())
		}
		return "map(" + g.shape(t.Elem()) + ")"
	case reflect.Interface:
		return "any"
	case reflect.Struct:
		if t.Name() == "" {
			return g.structExpr(t)
		}
		c := constName(t)
		if _, ok := g.defs[c]; ok {
			return c
		}
		if g.busy[c] {
			panic("recursive type " + t.String())
		}
		g.busy[c] = true
		g.defs[c] = g.structExpr(t)
		g.order = append(g.order, c)
		return c
	}
	panic("unhandled kind " + t.String())
}

// structExpr lists a struct's fields as encoding/json sees them: promoted embedded fields first flattened (Go's
// rules: a field at a shallower depth wins; two at the same depth cancel), then its own.
func (g *gen) structExpr(t reflect.Type) string {
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
			if f.Anonymous && (f.Tag.Get("json") == "" || (g.jsonLeaves && name == f.Name)) {
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
			all = append(all, fld{name, depth, g.shape(ft)})
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
		fmt.Fprintf(&b, " %s: %s,", tsKey(f.name), f.expr)
	}
	b.WriteString(" })")
	return b.String()
}

var ident = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func tsKey(k string) string {
	if ident.MatchString(k) {
		return k
	}
	return fmt.Sprintf("%q", k)
}

func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	panic("no build info for " + path)
}

// apiVersion reads `info.version` of the swagger.yaml the module ships (the Engine API version these types are).
func apiVersion() string {
	out, err := exec("go", "list", "-m", "-f", "{{.Dir}}", module)
	if err != nil {
		panic(err)
	}
	doc, err := os.ReadFile(strings.TrimSpace(out) + "/swagger.yaml")
	if err != nil {
		panic(err)
	}
	m := regexp.MustCompile(`(?m)^info:\n(?:  .*\n)*?  version: "([0-9.]+)"`).FindSubmatch(doc)
	if m == nil {
		panic("no info.version in swagger.yaml")
	}
	return string(m[1])
}

func main() {
	g := &gen{defs: map[string]string{}, busy: map[string]bool{}}
	rootExpr := map[string]string{}
	for _, r := range roots {
		rootExpr[r.name] = g.shape(r.t)
		g.roots = append(g.roots, rootExpr[r.name])
	}
	var b bytes.Buffer
	if len(os.Args) > 1 && os.Args[1] == "kubernetes" {
		os.Stdout.WriteString(kubeTable())
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "compose" {
		os.Stdout.WriteString(composeTable(moduleVersion(composeModule)))
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "seccomp" {
		os.Stdout.WriteString(seccompTable(moduleVersion(seccompModule)))
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "daemon" {
		os.Stdout.WriteString(daemonTable(moduleVersion(daemonModule)))
		return
	}
	ver := moduleVersion(module)
	fmt.Fprintf(&b, `// GENERATED by toolchain/schemas from %s %s (Engine API %s). Do not edit: run `+"`npm run schemas`"+`.
// test/policy/sources/docker/schema.test.ts fails when this file is not what the generator writes.
import { %s, type Shape } from "./shape";

/** The Go module the tables come from and the Engine API version it is: the version the project claims. */
export const ENGINE_API = { module: %q, version: %q, apiVersion: %q } as const;

`, module, ver, apiVersion(), g.imports(), module, ver, apiVersion())
	for _, c := range g.order {
		fmt.Fprintf(&b, "const %s: Shape = %s;\n", c, g.defs[c])
	}
	b.WriteString("\n")
	for _, r := range roots {
		fmt.Fprintf(&b, "/** %s. */\nexport const %s: Shape = %s;\n", r.doc, r.name, rootExpr[r.name])
	}
	os.Stdout.Write(b.Bytes())
}

var helpers = []string{"any", "array", "bool", "bytes", "float", "int8", "int16", "int32", "int64", "map", "ptr", "slice", "string", "struct", "text", "uint8", "uint16", "uint32", "uint64"}

// imports names the shape helpers the tables use, in the order biome sorts them.
func (g *gen) imports() string {
	var all strings.Builder
	for _, c := range g.order {
		all.WriteString(g.defs[c] + " ")
	}
	for _, r := range g.roots {
		all.WriteString(r + " ")
	}
	var used []string
	for _, h := range helpers {
		if regexp.MustCompile(`(^|[^A-Za-z0-9_])` + h + `([^A-Za-z0-9_]|$)`).MatchString(all.String()) {
			used = append(used, h)
		}
	}
	return strings.Join(used, ", ")
}
