package fsxml

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/switchboard/switchboard/internal/models"
)

// table reads one registry resource's rows straight into a renderer type T
// (a dialplan struct). The SELECT list and each column's decoder come from
// T's json tags matched against the resource's declared fields, checked
// once when the table is built: a tag naming a field the registry does not
// declare (renamed, removed), a type that does not fit the declaration, or
// a hashed secret is an error, so the service refuses to start and the
// contract test fails instead of a render silently reading zero values.
type table[T any] struct {
	res    *models.Resource
	cols   []column
	sel    string // "SELECT a, b FROM t WHERE "
	sealer *models.Sealer

	mu    sync.Mutex
	stmts map[string]*models.Stmt // prepared, by query text
}

// column decodes one selected column into one struct field.
type column struct {
	name  string
	index []int // field path in T
	set   func(v reflect.Value, raw []byte, t *tableCtx) error
	// text, set for string columns (plain or sealed), gives the value's
	// bytes, which join the row's one string (scan) instead of set
	// allocating each value alone.
	text func(raw []byte, t *tableCtx) ([]byte, error)
	// enum maps each declared value of an enumerated string column to one
	// shared copy: rows hold a reference, not bytes of their own.
	enum map[string]string
	// json marks a column holding JSON text (objects, lists); the bytes
	// its decoded value holds are counted by heldBytes.
	json bool
}

// tableCtx is what decoders need beyond the bytes.
type tableCtx struct{ sealer *models.Sealer }

// newTable checks T against the registry declaration of resource.
func newTable[T any](reg *models.Registry, sealer *models.Sealer, resource string) (*table[T], error) {
	res := reg.Resource(resource)
	typ := reflect.TypeFor[T]()
	if res == nil {
		return nil, fmt.Errorf("renderer type %s: resource %q is not in the registry", typ, resource)
	}
	t := &table[T]{res: res, sealer: sealer, stmts: map[string]*models.Stmt{}}
	var walk func(st reflect.Type, prefix []int) error
	walk = func(st reflect.Type, prefix []int) error {
		for i := 0; i < st.NumField(); i++ {
			sf := st.Field(i)
			index := append(append([]int{}, prefix...), i)
			name, ok := jsonName(sf)
			if !ok {
				if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
					if err := walk(sf.Type, index); err != nil {
						return err
					}
				}
				continue
			}
			set, err := decoderFor(res, name, sf.Type)
			if err != nil {
				return fmt.Errorf("renderer field %s.%s (json %q): %w", typ, sf.Name, name, err)
			}
			text, enum := textOf(res, name)
			t.cols = append(t.cols, column{name: name, index: index, set: set, text: text, enum: enum, json: isJSON(res, name)})
		}
		return nil
	}
	if err := walk(typ, nil); err != nil {
		return nil, err
	}
	if len(t.cols) == 0 {
		return nil, fmt.Errorf("renderer type %s reads no field of %s", typ, resource)
	}
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	t.sel = "SELECT " + strings.Join(names, ", ") + " FROM " + res.Table + " WHERE "
	return t, nil
}

// jsonName is the field's json name; ok is false for untagged or "-"
// fields (an untagged embedded struct is walked into by the caller).
func jsonName(sf reflect.StructField) (string, bool) {
	tag, ok := sf.Tag.Lookup("json")
	if !ok || !sf.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" || name == "-" {
		return "", false
	}
	return name, true
}

// decoderFor checks that a Go field of type gt can hold the registry field
// name of res and returns the column decoder.
func decoderFor(res *models.Resource, name string, gt reflect.Type) (func(reflect.Value, []byte, *tableCtx) error, error) {
	if name == "id" {
		// Every table has an integer primary key, declared or not.
		if !isInt(gt) {
			return nil, fmt.Errorf("id must be an integer, not %s", gt)
		}
		return setInt, nil
	}
	f := res.Field(name)
	if f == nil || !f.Stored() {
		return nil, fmt.Errorf("%s declares no stored field %q", res.Name, name)
	}
	switch f.Secret {
	case models.Hashed:
		return nil, fmt.Errorf("%s.%s is hashed and cannot be rendered", res.Name, name)
	case models.Encrypted:
		if gt.Kind() != reflect.String {
			return nil, fmt.Errorf("%s.%s is a sealed secret; want a string, not %s", res.Name, name, gt)
		}
		return setSealed, nil
	}
	if err := fits(f, gt); err != nil {
		return nil, fmt.Errorf("%s.%s: %w", res.Name, name, err)
	}
	switch f.Type {
	case models.String, models.Time:
		return setString, nil
	case models.Int:
		return setInt, nil
	case models.Bool:
		return setBool, nil
	case models.Number:
		return setFloat, nil
	}
	return setJSON, nil
}

// textOf says how a column's value joins its row's string (scan): as
// stored for a plain string or time, opened for a sealed secret; nil for
// any other column. enum is set for a string with declared values.
// decoderFor has checked the Go field is a string in those cases.
func textOf(res *models.Resource, name string) (func([]byte, *tableCtx) ([]byte, error), map[string]string) {
	f := res.Field(name)
	if name == "id" || f == nil {
		return nil, nil
	}
	if f.Secret == models.Encrypted {
		return openText, nil
	}
	if f.Secret != models.NotSecret || f.Type != models.String && f.Type != models.Time {
		return nil, nil
	}
	var enum map[string]string
	if len(f.Enum) > 0 {
		enum = make(map[string]string, len(f.Enum))
		for _, v := range f.Enum {
			enum[v] = v
		}
	}
	return plainText, enum
}

// isJSON reports whether decoderFor reads the column as JSON text.
func isJSON(res *models.Resource, name string) bool {
	f := res.Field(name)
	if name == "id" || f == nil || f.Secret != models.NotSecret {
		return false
	}
	switch f.Type {
	case models.String, models.Time, models.Int, models.Bool, models.Number:
		return false
	}
	return true
}

func plainText(raw []byte, _ *tableCtx) ([]byte, error) { return raw, nil }

func openText(raw []byte, t *tableCtx) ([]byte, error) {
	plain, err := t.sealer.Open(string(raw))
	return []byte(plain), err
}

// fits reports whether Go type gt can hold the declared field f, looking
// into the members of objects and lists of objects.
func fits(f *models.Field, gt reflect.Type) error {
	want := ""
	switch f.Type {
	case models.String, models.Time:
		if gt.Kind() == reflect.String {
			return nil
		}
		want = "a string"
	case models.Int:
		if isInt(gt) {
			return nil
		}
		want = "an integer"
	case models.Bool:
		if gt.Kind() == reflect.Bool {
			return nil
		}
		want = "a bool"
	case models.Number:
		if gt.Kind() == reflect.Float64 {
			return nil
		}
		want = "a float64"
	case models.StringList:
		if gt.Kind() == reflect.Slice && gt.Elem().Kind() == reflect.String {
			return nil
		}
		want = "a []string"
	case models.IntList:
		if gt.Kind() == reflect.Slice && isInt(gt.Elem()) {
			return nil
		}
		want = "a slice of integers"
	case models.Map:
		if gt.Kind() == reflect.Map && gt.Key().Kind() == reflect.String {
			return nil
		}
		want = "a map"
	case models.Destination:
		st := derefStruct(gt)
		if st == nil {
			want = "a struct"
			break
		}
		return propsFit([]*models.Field{{Name: "type"}, {Name: "target"}}, st)
	case models.Object:
		st := derefStruct(gt)
		if st == nil {
			want = "a struct"
			break
		}
		return propsFit(f.Props, st)
	case models.ObjectList:
		if gt.Kind() == reflect.Slice {
			if st := derefStruct(gt.Elem()); st != nil {
				return propsFit(f.Props, st)
			}
		}
		want = "a slice of structs"
	default:
		want = "a supported field type"
	}
	return fmt.Errorf("want %s, not %s", want, gt)
}

// propsFit checks every json-tagged member of st against the declared props.
func propsFit(props []*models.Field, st reflect.Type) error {
	byName := map[string]*models.Field{}
	for _, p := range props {
		byName[p.Name] = p
	}
	for i := 0; i < st.NumField(); i++ {
		sf := st.Field(i)
		name, ok := jsonName(sf)
		if !ok {
			continue
		}
		p := byName[name]
		if p == nil {
			return fmt.Errorf("member %q (%s.%s) is not declared", name, st, sf.Name)
		}
		if err := fits(p, sf.Type); err != nil {
			return fmt.Errorf("member %q: %w", name, err)
		}
	}
	return nil
}

func derefStruct(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

func isInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return true
	}
	return false
}

// Decoders. raw is nil for NULL, which leaves the zero value.

func setString(v reflect.Value, raw []byte, _ *tableCtx) error {
	v.SetString(string(raw))
	return nil
}

func setInt(v reflect.Value, raw []byte, _ *tableCtx) error {
	if len(raw) == 0 {
		return nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return err
	}
	if v.OverflowInt(n) {
		// A narrow field (a compact model's int32) must not wrap silently.
		return fmt.Errorf("%d does not fit %s", n, v.Type())
	}
	v.SetInt(n)
	return nil
}

func setBool(v reflect.Value, raw []byte, _ *tableCtx) error {
	// Stored as 0/1 on both dialects.
	v.SetBool(len(raw) > 0 && string(raw) != "0")
	return nil
}

func setFloat(v reflect.Value, raw []byte, _ *tableCtx) error {
	if len(raw) == 0 {
		return nil
	}
	x, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return err
	}
	v.SetFloat(x)
	return nil
}

// setJSON decodes a column holding JSON text (lists, objects,
// destinations) directly into the typed field.
func setJSON(v reflect.Value, raw []byte, _ *tableCtx) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, v.Addr().Interface())
}

func setSealed(v reflect.Value, raw []byte, t *tableCtx) error {
	if len(raw) == 0 {
		return nil
	}
	plain, err := t.sealer.Open(string(raw))
	if err != nil {
		return err
	}
	v.SetString(plain)
	return nil
}

// query reads the rows matching where (a condition on stored columns with
// ? placeholders), ordered by id. It also returns the bytes read, which
// the model cache uses as the rows' weight.
func (t *table[T]) query(ctx context.Context, db models.Querier, where string, args ...any) ([]T, int, error) {
	return t.queryLimit(ctx, db, where, 0, args...)
}

// queryLimit is query with at most limit rows (0: no limit).
func (t *table[T]) queryLimit(ctx context.Context, db models.Querier, where string, limit int, args ...any) ([]T, int, error) {
	stmt, err := t.stmt(ctx, db, where, limit)
	if err != nil {
		return nil, 0, err
	}
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("load %s: %w", t.res.Name, err)
	}
	var out []T
	size, err := t.scan(rows, 0, func([]sql.RawBytes) (*T, error) {
		out = append(out, *new(T))
		return &out[len(out)-1], nil
	}, nil)
	if err != nil {
		return nil, 0, err
	}
	return out, size + len(out)*int(reflect.TypeFor[T]().Size()), nil
}

// scan decodes every row of rows (and closes them): its first lead
// columns are handed to into as they are (a bulk read's tenant id), which
// returns where the row's other columns are decoded to; sized, when not
// nil, is then told the bytes the row holds beyond its struct. scan
// returns the sum of those. Rows are decoded in place, not copied.
//
// A tenant model holds every row it reads, so rows are kept compact: the
// string columns of a row (secrets opened) share one string, a single
// allocation instead of one per non-empty value, and an enumerated
// column's value is the one shared copy of it (column.enum). A row's
// bytes are then exactly that string's length plus what its object and
// list columns decoded to (heldBytes: a forward setting's 35 bytes of JSON
// hold one usually empty destination); numbers and flags live in the
// struct, which the callers count.
func (t *table[T]) scan(rows *models.Rows, lead int, into func(lead []sql.RawBytes) (*T, error), sized func(n int)) (int, error) {
	defer rows.Close()
	raws := make([]sql.RawBytes, lead+len(t.cols))
	dest := make([]any, len(raws))
	for i := range raws {
		dest[i] = &raws[i]
	}
	size := 0
	ctxv := &tableCtx{sealer: t.sealer}
	var text []byte  // the row's string columns, one after the other
	var spans []span // where each column's value is in text
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return 0, fmt.Errorf("load %s: %w", t.res.Name, err)
		}
		v, err := into(raws[:lead])
		if err != nil {
			return 0, fmt.Errorf("load %s: %w", t.res.Name, err)
		}
		row := reflect.ValueOf(v).Elem()
		n := 0
		text, spans = text[:0], spans[:0]
		for i, c := range t.cols {
			raw := raws[lead+i]
			if len(raw) == 0 && (c.text != nil || raw == nil) {
				continue // NULL, or an empty string: the zero value
			}
			if c.text == nil {
				if err := c.set(row.FieldByIndex(c.index), raw, ctxv); err != nil {
					return 0, fmt.Errorf("load %s.%s: %w", t.res.Name, c.name, err)
				}
				if c.json {
					n += heldBytes(row.FieldByIndex(c.index))
				}
				continue
			}
			if shared, ok := c.enum[string(raw)]; ok {
				row.FieldByIndex(c.index).SetString(shared)
				continue
			}
			b, err := c.text(raw, ctxv)
			if err != nil {
				return 0, fmt.Errorf("load %s.%s: %w", t.res.Name, c.name, err)
			}
			spans = append(spans, span{col: i, from: len(text), to: len(text) + len(b)})
			text = append(text, b...)
		}
		if len(text) > 0 {
			all := string(text)
			for _, sp := range spans {
				row.FieldByIndex(t.cols[sp.col].index).SetString(all[sp.from:sp.to])
			}
			n += len(all)
		}
		size += n
		if sized != nil {
			sized(n)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("load %s: %w", t.res.Name, err)
	}
	return size, nil
}

// heldBytes is what a decoded value holds outside its own struct field:
// string bytes, slices' arrays, pointed-to values, map entries (as their
// keys' and values' sizes, without the map's own overhead), recursively.
func heldBytes(v reflect.Value) int {
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return int(v.Type().Elem().Size()) + heldBytes(v.Elem())
	case reflect.Slice:
		n := v.Cap() * int(v.Type().Elem().Size())
		for i := range v.Len() {
			n += heldBytes(v.Index(i))
		}
		return n
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			n += heldBytes(v.Field(i))
		}
		return n
	case reflect.Map:
		n := v.Len() * int(v.Type().Key().Size()+v.Type().Elem().Size())
		for it := v.MapRange(); it.Next(); {
			n += heldBytes(it.Key()) + heldBytes(it.Value())
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return int(e.Type().Size()) + heldBytes(e)
	}
	return 0
}

// span is where one column's value lies in its row's string.
type span struct{ col, from, to int }

// stmt prepares "SELECT ... WHERE where ORDER BY id" once per clause (the
// driver re-prepares it per connection as needed), which on MySQL saves a
// prepare and a close round trip per query.
func (t *table[T]) stmt(ctx context.Context, db models.Querier, where string, limit int) (*models.Stmt, error) {
	q := t.sel + where + " ORDER BY id"
	if limit > 0 {
		q += " LIMIT " + strconv.Itoa(limit)
	}
	t.mu.Lock()
	s := t.stmts[q]
	t.mu.Unlock()
	if s != nil {
		return s, nil
	}
	// Prepared without the lock: on MySQL a prepare is a round trip, and
	// right after a restart every tenant's first read of this table would
	// otherwise queue behind it (or behind a hung one). Two racing
	// prepares keep the first and close the other.
	s, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("prepare %s load: %w", t.res.Name, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if won := t.stmts[q]; won != nil {
		s.Close()
		return won, nil
	}
	t.stmts[q] = s
	return s, nil
}

// close releases the prepared statements.
func (t *table[T]) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, s := range t.stmts {
		s.Close()
		delete(t.stmts, k)
	}
}

// byTenants reads the rows of every tenant in ids with one query (no
// prepared statement: the list differs each time), grouped by tenant id
// in id order as query returns them, with the bytes each tenant's rows
// took (as query counts them). Each tenant's rows get a slice of their
// own, exactly as long: models are evicted one tenant at a time.
func (t *table[T]) byTenants(ctx context.Context, db models.Querier, ids []int64) (map[int64][]T, map[int64]int, error) {
	out, sizes := map[int64][]T{}, map[int64]int{}
	if len(ids) == 0 {
		return out, sizes, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	q := strings.Replace(t.sel, "SELECT ", "SELECT tenant_id, ", 1) + "tenant_id IN (?" + strings.Repeat(",?", len(ids)-1) + ") ORDER BY id"
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", t.res.Name, err)
	}
	// Read into one slice first, then copied to each tenant's.
	var all []T
	var owner []int64
	rowSize := int(reflect.TypeFor[T]().Size())
	_, err = t.scan(rows, 1, func(lead []sql.RawBytes) (*T, error) {
		id, err := strconv.ParseInt(string(lead[0]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("tenant id %q: %w", lead[0], err)
		}
		owner = append(owner, id)
		all = append(all, *new(T))
		return &all[len(all)-1], nil
	}, func(n int) { sizes[owner[len(owner)-1]] += rowSize + n })
	if err != nil {
		return nil, nil, err
	}
	counts := map[int64]int{}
	for _, id := range owner {
		counts[id]++
	}
	for i, id := range owner {
		if out[id] == nil {
			out[id] = make([]T, 0, counts[id])
		}
		out[id] = append(out[id], all[i])
	}
	return out, sizes, nil
}
