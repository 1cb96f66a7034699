//! JSON Schema 2020-12 validation with Ajv-shaped issues and Ajv-style default filling.
