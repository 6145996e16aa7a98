package models

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// toColumn converts an API value into what the column stores: JSON text
// for lists and objects, 0/1 for booleans, sealed or hashed text for secrets.
func (s *Store) toColumn(f *Field, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch f.Secret {
	case Encrypted:
		if plain, ok := v.(string); ok {
			return s.sealer.Seal(plain), nil
		}
		// Structured secrets (Map credentials, header values) are sealed
		// as their JSON text.
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", f.Name, err)
		}
		return s.sealer.Seal(string(b)), nil
	case Hashed:
		return HashPassword(v.(string))
	case Digest:
		return HashKey(v.(string)), nil
	}
	switch f.Type {
	case Bool:
		if v.(bool) {
			return 1, nil
		}
		return 0, nil
	case String, Time, Int, Number:
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", f.Name, err)
	}
	return string(b), nil
}

// fromColumn converts a scanned column value back into its API form. It
// accepts what both drivers return ([]byte, string, int64, float64).
func fromColumn(f *Field, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if f.Secret != NotSecret {
		// Sealed or hashed text whatever the field's API type.
		return asString(v), nil
	}
	switch f.Type {
	case Int:
		return asInt64(v)
	case Bool:
		n, err := asInt64(v)
		return n != 0, err
	case Number:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		}
		return strconv.ParseFloat(asString(v), 64)
	case String, Time:
		return asString(v), nil
	}
	var out any
	if err := json.Unmarshal([]byte(asString(v)), &out); err != nil {
		return nil, fmt.Errorf("decode %s: %w", f.Name, err)
	}
	return normaliseJSONNumbers(out), nil
}

// normaliseJSONNumbers turns float64 whole numbers from encoding/json into
// int64 so stored objects read back the same type they were written with.
func normaliseJSONNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	case []any:
		for i := range x {
			x[i] = normaliseJSONNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normaliseJSONNumbers(x[k])
		}
	}
	return v
}

func asInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return strconv.ParseInt(asString(v), 10, 64)
}

func asString(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
