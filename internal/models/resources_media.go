package models

// Voice prompts and music-on-hold classes (the media library holds their files).

// voicePromptsResource declares a prompt. audio_base64 (or a multipart
// "audio" part) is converted by the store's AudioSink (package media) into
// <media dir>/<tenant>/<filename>, a 16 kHz mono WAV, before the row is
// written; filename, format, duration_ms and size_bytes describe that file.
var voicePromptsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "voice_prompts", Title: "voice prompt", Scope: TenantScope, Table: "voice_prompts", Order: "name",
	CloneFlag: "tenant_voiceprompts",
	Hooks:     rules{checks: []check{requireWhen("tts_text", "source", "tts")}},
	Fields: []*Field{
		nameField(),
		{Name: "language", Type: String, Pattern: patLanguage},
		enumField("source", "upload", "upload", "tts", "phone"),
		{Name: "audio_base64", Type: String, Input: true, MaxLen: 22369624, Pattern: `^[A-Za-z0-9+/]*={0,2}$`, Doc: "WAV, MP3, OGG or FLAC, decoded at most 16 MiB; create only; not empty. 413 audio_too_long past the longest prompt (SWITCHBOARD_MEDIA_MAX_PROMPT_DURATION), audio_too_large past the largest stored file, storage_quota_exceeded past the tenant's max_storage_mb"},
		{Name: "tts_text", Type: String, MaxLen: 2000, Doc: "required when source is tts"},
		{Name: "filename", Type: String, ReadOnly: true, Doc: "server-chosen"},
		{Name: "format", Type: String, ReadOnly: true, MaxLen: 16},
		{Name: "duration_ms", Type: Int, ReadOnly: true},
		{Name: "size_bytes", Type: Int, ReadOnly: true},
		descriptionField(),
	},
}

var musicOnHoldResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "music_on_hold", Title: "music-on-hold class", Scope: TenantScope, Table: "music_on_hold", Order: "name",
	CloneFlag: "tenant_voiceprompts",
	Hooks:     mohHooks{rules{checks: []check{intOneOf("rate", 8000, 16000, 32000, 48000)}}},
	Fields: []*Field{
		{Name: "name", Type: String, Required: true, Pattern: `^[a-z0-9_]{1,32}$`, Doc: "rendered as local_stream://<tenant>_<name>"},
		{Name: "files", Type: ObjectList, ReadOnly: true, Doc: "added by POST …/files", Props: []*Field{
			{Name: "filename", Type: String},
			{Name: "duration_ms", Type: Int},
		}},
		intField("rate", 8000, 48000, 8000, "one of 8000, 16000, 32000, 48000"),
		boolField("shuffle", false, ""),
		promptRef("chime_prompt_id", ""),
		intField("chime_frequency_seconds", 0, 3600, 30, ""),
		intField("chime_max", 0, 1000, 0, ""),
		descriptionField(),
	},
}
