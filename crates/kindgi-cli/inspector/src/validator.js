// The validator of every form: Ajv for draft 2020-12, which schemars
// writes (the forms don't block a call on it: the service's own
// validation is what the page shows).
import { customizeValidator } from '@rjsf/validator-ajv8';
import Ajv2020 from 'ajv/dist/2020.js';

export const validator = customizeValidator({ AjvClass: Ajv2020 });
