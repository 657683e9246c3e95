// The forms an id takes on the wire. Legal forms (any letter case of a UUID) must act on the same
// resource as the canonical lower-case form; illegal forms (a prefix, braces, spaces, a look-alike
// character, the wrong length) must be answered 400 invalid_request naming the field, and change
// nothing.
export const LEGAL_FORMS = ['lower', 'upper', 'mixed'] as const;
export const ILLEGAL_FORMS = ['urn', 'braces', 'leading_space', 'trailing_space', 'inner_space', 'cyrillic', 'fullwidth', 'short', 'long', 'no_hyphens', 'empty'] as const;
export type LegalForm = (typeof LEGAL_FORMS)[number];
export type IllegalForm = (typeof ILLEGAL_FORMS)[number];
export type IdForm = LegalForm | IllegalForm;

export const isLegal = (form: IdForm): form is LegalForm => (LEGAL_FORMS as readonly string[]).includes(form);

/** The id (canonical, lower-case) written in `form`. */
export function idInForm(id: string, form: IdForm): string {
  switch (form) {
    case 'lower': return id.toLowerCase();
    case 'upper': return id.toUpperCase();
    case 'mixed': return [...id].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join('');
    case 'urn': return `urn:uuid:${id}`;
    case 'braces': return `{${id}}`;
    case 'leading_space': return ` ${id}`;
    case 'trailing_space': return `${id} `;
    case 'inner_space': return `${id.slice(0, 8)} ${id.slice(9)}`;
    // U+0430 looks like "a"; U+FF10.. are full-width digits: neither is a hex digit.
    case 'cyrillic': return `\u0430${id.slice(1)}`;
    case 'fullwidth': return `\uff10${id.slice(1)}`;
    case 'short': return id.slice(0, -1);
    case 'long': return `${id}0`;
    case 'no_hyphens': return id.replace(/-/g, '');
    case 'empty': return '';
  }
}
