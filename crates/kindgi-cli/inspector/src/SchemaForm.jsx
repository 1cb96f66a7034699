import { useMemo } from 'react';
import Form from '@rjsf/core';
import { validator } from './validator.js';
import { fieldOrder } from './fieldOrder.js';
import { templates } from './formTemplates.jsx';

/**
 * A form made from a JSON Schema, as every form of the page is: fields in
 * the order `fieldOrder` gives, buttons that say what they do, and no
 * validation of its own (the service's issues are what the page shows).
 */
export default function SchemaForm({ schema, children, ...props }) {
  const uiSchema = useMemo(() => fieldOrder(schema), [schema]);
  return (
    <Form
      schema={schema}
      uiSchema={uiSchema}
      validator={validator}
      templates={templates}
      noValidate
      noHtml5Validate
      showErrorList={false}
      {...props}
    >
      {children}
    </Form>
  );
}
