// Form pieces: every input has a visible label, and the API's error message for a field is shown
// next to that field (aria-invalid, aria-describedby), the others above the form.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api';

export interface FieldProps {
  label: string;
  name: string;
  value: string;
  onInput: (value: string) => void;
  error?: string | null;
  type?: string;
  autoComplete?: string;
  required?: boolean;
  inputMode?: 'decimal' | 'email' | 'text';
  /** A time field's precision: "1" takes seconds. */
  step?: string;
}

export function Field({ label, name, value, onInput, error, type = 'text', autoComplete, required = true, inputMode, step }: FieldProps) {
  const id = `field-${name}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} name={name} type={type} value={value} required={required} autoComplete={autoComplete} inputMode={inputMode} step={step}
        aria-invalid={error ? 'true' : undefined} aria-describedby={error ? `${id}-error` : undefined}
        onInput={(e) => onInput((e.target as HTMLInputElement).value)} />
      {error ? <p id={`${id}-error`} class="field-error">{error}</p> : null}
    </div>
  );
}

/** A choice among `options`: values shown as they are, or with a label of their own (`{ value, label }`). */
export function Select({ label, name, value, options, onInput }: { label: string; name: string; value: string; options: Array<string | { value: string; label: string }>; onInput: (value: string) => void }) {
  const id = `field-${name}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={name} value={value} onChange={(e) => onInput((e.target as HTMLSelectElement).value)}>
        {options.map((option) => typeof option === 'string'
          ? <option key={option} value={option}>{option}</option>
          : <option key={option.value} value={option.value}>{option.label}</option>)}
      </select>
    </div>
  );
}

/** A form's errors: by field (the API's `details`, mapped to the form's own names), or for the whole form. */
export interface FormErrors { fields: Record<string, string>; form: string | null }

export function useSubmit(fieldOf: (details: string | null) => string | null = (d) => d) {
  const [errors, setErrors] = useState<FormErrors>({ fields: {}, form: null });
  const [busy, setBusy] = useState(false);
  async function submit(work: () => Promise<void>) {
    setBusy(true);
    setErrors({ fields: {}, form: null });
    try {
      await work();
    } catch (error) {
      if (error instanceof ApiError) {
        const field = fieldOf(error.body.details);
        setErrors(field ? { fields: { [field]: error.body.message }, form: null } : { fields: {}, form: error.body.message });
      } else {
        setErrors({ fields: {}, form: (error as Error).message });
      }
    } finally {
      setBusy(false);
    }
  }
  return { errors, busy, submit };
}

export function FormError({ message }: { message: string | null }) {
  return message ? <p class="form-error" role="alert">{message}</p> : null;
}

/** A card under its heading; `wide` takes the whole row where cards sit two by two. */
export function Section({ title, children, wide = false }: { title: string; children: ComponentChildren; wide?: boolean }) {
  const id = `section-${title.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  return (
    <section aria-labelledby={id} class={wide ? 'card wide' : 'card'}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A secret the API shows once (a key, a signing secret): shown with a button that copies it. */
export function ShownOnce({ title, intro, secret, copyLabel, onDone, doneLabel = 'Done' }: { title: string; intro: string; secret: string; copyLabel: string; onDone: () => void; doneLabel?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Section title={title}>
      <p>{intro}</p>
      <p><code class="secret" data-testid="secret">{secret}</code></p>
      <button type="button" onClick={() => { void navigator.clipboard?.writeText(secret).then(() => setCopied(true), () => setCopied(false)); }}>{copyLabel}</button>
      <span role="status" class="hint">{copied ? ' Copied' : ''}</span>
      <p><button type="button" onClick={onDone}>{doneLabel}</button></p>
    </Section>
  );
}
