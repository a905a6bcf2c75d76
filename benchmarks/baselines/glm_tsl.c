/*
 * GLM-TSL on the logistic bandit, hand-written in C99: the reference loop of
 * benchmarks/bench_c_reference.py (compiled there with the system compiler, called through ctypes).
 *
 * The algorithm is bayesbandit's GLMTSL(logistic(prior_scale), a) with the default DenseNewton
 * solver, transcribed:
 *
 *   round t < d:  pull order[t], the greedy pivoted Gram-Schmidt order of the arms
 *                 (bayesbandit.policies._explore.exploration_order);
 *   round t >= d: theta~ = theta_hat + a L^{-T} xi, xi ~ N(0, I_d), L the lower Cholesky factor of
 *                 the Hessian kept in the state; pull argmax_k x_k^T theta~ (sigmoid is increasing),
 *                 exact ties broken uniformly with one random integer;
 *   reward        Bernoulli(sigmoid(x^T theta*)); expected regret max_k mu_k - mu_action;
 *   update, full history (history="full": per-arm pull counts n_k and reward sums s_k, the exact
 *                 sufficient statistics of the rows):
 *                 U(theta) = |theta|^2 / (2 s^2) - sum_k [s_k A_k - n_k log(1 + e^{A_k})], A_k = x_k^T theta,
 *                 minimised from the previous theta by bayesbandit.inference.newton_minimize with
 *                 factor0 = L (a chord step first), tol, max_steps, quadratic_stop, Armijo c = 1e-4,
 *                 step lengths 1, 1/4, 1/16, ... down to 1e-9; the factor kept is the Hessian's at the
 *                 last derivative evaluation, as there;
 *   update, online (history="online"): bayesbandit.inference.online_laplace.rank_one_laplace: the MAP of
 *                 N(m, (L L^T)^{-1}) times the new row's likelihood as the root sigma of
 *                 F(sigma) = sigma - (y - sigmoid(x^T (m + sigma u))), u = (L L^T)^{-1} x, by bracketed
 *                 Newton, stopped when F^2 v / (2 (1 + c v)) <= tol, then L <- chol(L L^T + c x x^T);
 *   a fit with a non-finite value is not kept (GLMPolicy.update's _kept_fit).
 *
 * Newton steps are counted as the library counts them: Hessian evaluations per update (the chord
 * step is not one), and evaluations of F for the online solve.
 *
 * Where the work differs from the library's (the same numbers up to rounding, unless said):
 *   - the potential sums over the arms pulled so far, kept as contiguous rows; the library sums over
 *     all K arms, those of weight 0 masked;
 *   - U and its gradient at the start of a refit come from one pass over the arms;
 *   - the arm is the argmax of x^T theta~, the library's of sigmoid(x^T theta~): the same arm unless
 *     sigmoid rounds two scores to 1.0 in float64 (x^T theta~ > 36.7), where the library ties them;
 *   - initial exploration rounds draw no sample (the library draws one and overrides it);
 *   - ties: one random integer per round (the library: K uniforms, the largest among the ties);
 *   - the online state keeps no design matrix G (the library's OnlineHistory adds x x^T to it every
 *     round; on a fixed arm set the exploration order is computed once and G is not read);
 *   - random numbers come from xoshiro256** seeded by splitmix64 (seed, run), normals by Box-Muller:
 *     they do not match JAX's.
 * Matrices are row-major; L is lower triangular with its upper part zero. With -DGLM_DIM=d the
 * dimension is a compile-time constant (loops over it unrolled); -DGLM_LIBMVEC uses glibc's vector exp.
 */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef GLM_DIM
#define DIM(p) GLM_DIM /* -DGLM_DIM=d: the dimension is a constant and loops over it are unrolled */
#else
#define DIM(p) (p)
#endif

#ifdef GLM_LIBMVEC
/* glibc's vector math library (link with -lmvec): the loop over arms calls exp on 4 or 8 values at a
 * time, as glibc's <math.h> declares it under -ffast-math (without the rest of -ffast-math) */
double exp(double) __attribute__((simd("notinbranch")));
#endif

#define ARMIJO 1e-4
#define MIN_SCALE 1e-9

/* ------------------------------------------------------------------ random numbers */
typedef struct {
    uint64_t s[4];
    double spare; /* the second normal of a Box-Muller pair */
    int has_spare;
} rng_t;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t next_u64(rng_t *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static inline double uniform(rng_t *r) { return (double)(next_u64(r) >> 11) * 0x1.0p-53; }

static double normal(rng_t *r) {
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1 = 1.0 - uniform(r); /* (0, 1] */
    double u2 = uniform(r);
    double radius = sqrt(-2.0 * log(u1));
    double angle = 6.283185307179586 * u2;
    r->spare = radius * sin(angle);
    r->has_spare = 1;
    return radius * cos(angle);
}

static void rng_seed(rng_t *r, uint64_t seed, uint64_t run) {
    uint64_t x = seed * 0x2545f4914f6cdd1dULL + run;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
    r->has_spare = 0;
}

/* ------------------------------------------------------------------ dense linear algebra, p x p */
/* Lower Cholesky factor of the symmetric matrix whose lower triangle is a; NaN where not positive definite. */
static void cholesky(int p, const double *restrict a, double *restrict l) {
    p = DIM(p);
    memset(l, 0, sizeof(double) * p * p);
    for (int j = 0; j < p; j++) {
        double diag = a[j * p + j];
        for (int k = 0; k < j; k++) diag -= l[j * p + k] * l[j * p + k];
        double root = diag > 0.0 ? sqrt(diag) : NAN;
        l[j * p + j] = root;
        for (int i = j + 1; i < p; i++) {
            double v = a[i * p + j];
            for (int k = 0; k < j; k++) v -= l[i * p + k] * l[j * p + k];
            l[i * p + j] = v / root;
        }
    }
}

/* x with L x = b */
static void solve_lower(int p, const double *restrict l, const double *restrict b, double *restrict x) {
    p = DIM(p);
    for (int i = 0; i < p; i++) {
        double v = b[i];
        for (int k = 0; k < i; k++) v -= l[i * p + k] * x[k];
        x[i] = v / l[i * p + i];
    }
}

/* x with L^T x = b */
static void solve_lower_t(int p, const double *restrict l, const double *restrict b, double *restrict x) {
    p = DIM(p);
    for (int i = p - 1; i >= 0; i--) {
        double v = b[i];
        for (int k = i + 1; k < p; k++) v -= l[k * p + i] * x[k];
        x[i] = v / l[i * p + i];
    }
}

static inline double dot(int p, const double *restrict a, const double *restrict b) {
    p = DIM(p);
    double s = 0.0;
    for (int i = 0; i < p; i++) s += a[i] * b[i];
    return s;
}

static int all_finite(int n, const double *a) {
    for (int i = 0; i < n; i++)
        if (!isfinite(a[i])) return 0;
    return 1;
}

static inline double sigmoid(double a) { return 1.0 / (1.0 + exp(-a)); }

/* ------------------------------------------------------------------ the full-history potential */
typedef struct {
    int p, num_active;    /* the arms pulled at least once (rows of weight 0 add nothing to U), in order */
    const double *rows;   /* (num_active, p) their features, contiguous */
    const double *counts; /* (num_active,) pulls n_k */
    const double *sums;   /* (num_active,) reward sums s_k */
    double inv_var;       /* 1 / prior_scale^2 */
    double *xa, *xe, *xs, *xc; /* scratch (K,): A_k, exp(-|A_k|), then scores and curvatures */
} potential_t;

/* A_k = x_k^T theta and e_k = exp(-|A_k|) of the pulled arms: loops over arms that vectorise */
static void predictors(const potential_t *u, const double *restrict theta) {
    int p = DIM(u->p), n = u->num_active;
    double *restrict xa = u->xa, *restrict xe = u->xe;
    const double *restrict rows = u->rows;
    for (int r = 0; r < n; r++) xa[r] = dot(p, rows + (size_t)r * p, theta);
    for (int r = 0; r < n; r++) xe[r] = exp(-fabs(xa[r]));
}

/* U(theta); the predictors must be those of theta */
static double potential_at(const potential_t *u, const double *restrict theta) {
    int p = DIM(u->p), n = u->num_active;
    const double *restrict xa = u->xa, *restrict xe = u->xe, *restrict counts = u->counts, *restrict sums = u->sums;
    double *restrict soft = u->xs;
    for (int r = 0; r < n; r++) soft[r] = fmax(xa[r], 0.0) + log1p(xe[r]); /* log(1 + e^{A}) */
    double value = 0.5 * u->inv_var * dot(p, theta, theta);
    for (int r = 0; r < n; r++) value -= sums[r] * xa[r] - counts[r] * soft[r];
    return value;
}

static double potential(const potential_t *u, const double *restrict theta) {
    predictors(u, theta);
    return potential_at(u, theta);
}

/* The gradient, and the Hessian when hess is not NULL (both triangles: a rank-one update per row that
 * vectorises); with value not NULL also the potential, from the same exponentials. */
static void derivatives(const potential_t *u, const double *restrict theta, double *restrict grad,
                        double *restrict hess, double *value) {
    int p = DIM(u->p), n = u->num_active;
    predictors(u, theta);
    if (value) *value = potential_at(u, theta);
    const double *restrict xa = u->xa, *restrict xe = u->xe, *restrict counts = u->counts, *restrict sums = u->sums;
    double *restrict score = u->xs, *restrict curvature = u->xc;
    for (int r = 0; r < n; r++) {
        double e = xe[r];
        double mean = xa[r] >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e); /* sigmoid(A) */
        score[r] = sums[r] - counts[r] * mean;
        curvature[r] = counts[r] * mean * (1.0 - mean);
    }
    for (int i = 0; i < p; i++) grad[i] = u->inv_var * theta[i];
    for (int r = 0; r < n; r++) {
        const double *restrict x = u->rows + (size_t)r * p;
        for (int i = 0; i < p; i++) grad[i] -= score[r] * x[i];
    }
    if (!hess) return;
    memset(hess, 0, sizeof(double) * p * p);
    for (int i = 0; i < p; i++) hess[i * p + i] = u->inv_var;
    for (int r = 0; r < n; r++) {
        const double *restrict x = u->rows + (size_t)r * p;
        for (int i = 0; i < p; i++) {
            double ci = curvature[r] * x[i];
            for (int j = 0; j < p; j++) hess[i * p + j] += ci * x[j];
        }
    }
}

/* Armijo backtracking from theta along step: returns whether it moved; theta, value updated in place. */
static int line_search(const potential_t *u, double *restrict theta, double *value, const double *restrict step,
                       double slope, double *scale_out, double *restrict trial_theta) {
    int p = DIM(u->p);
    double scale = 1.0, trial;
    for (;;) {
        for (int i = 0; i < p; i++) trial_theta[i] = theta[i] + scale * step[i];
        trial = potential(u, trial_theta);
        if (trial <= *value + ARMIJO * scale * slope || scale < MIN_SCALE) break;
        scale *= 0.25;
    }
    *scale_out = scale;
    if (!(trial <= *value + ARMIJO * scale * slope)) return 0;
    memcpy(theta, trial_theta, sizeof(double) * p);
    *value = trial;
    return 1;
}

typedef struct {
    double *grad, *hess, *chol, *step, *tmp, *trial;
} work_t;

/* newton_minimize with factor0 (chord start), positive_definite, no restart. theta and l are the
 * start and are overwritten by the result; returns converged, *steps the Hessian evaluations. */
static int newton(const potential_t *u, double *restrict theta, double *restrict l, double tol, int max_steps,
                  int quadratic_stop, int *steps, const work_t *w) {
    int p = DIM(u->p);
    /* U at the start, and the chord step: the previous factor and the new gradient */
    double value;
    derivatives(u, theta, w->grad, NULL, &value);
    solve_lower(p, l, w->grad, w->tmp);
    solve_lower_t(p, l, w->tmp, w->step);
    double slope = 0.0;
    for (int i = 0; i < p; i++) {
        w->step[i] = -w->step[i];
        slope += w->grad[i] * w->step[i];
    }
    double scale;
    if (isfinite(value) && all_finite(p, w->step) && slope < 0.0)
        line_search(u, theta, &value, w->step, slope, &scale, w->trial);

    int done = 0, failed = 0, i = 0;
    while (i < max_steps && !done && !failed) {
        derivatives(u, theta, w->grad, w->hess, NULL);
        cholesky(p, w->hess, w->chol);
        solve_lower(p, w->chol, w->grad, w->tmp);
        solve_lower_t(p, w->chol, w->tmp, w->step);
        slope = 0.0;
        for (int j = 0; j < p; j++) {
            w->step[j] = -w->step[j];
            slope += w->grad[j] * w->step[j];
        }
        double decrement = -0.5 * slope;
        int finite = isfinite(value) && all_finite(p, w->grad) && all_finite(p * p, w->chol);
        done = finite && decrement <= tol;
        int moved = 0;
        scale = 0.0;
        if (!done && finite) moved = line_search(u, theta, &value, w->step, slope, &scale, w->trial);
        if (quadratic_stop) {
            double lam = sqrt(2.0 * fmax(decrement, 0.0));
            double q = 1.0 - fmin(lam, 0.5);
            double predicted = 2.0 * decrement * decrement / (q * q * q * q);
            done = done || (moved && scale == 1.0 && lam < 0.25 && predicted <= tol);
        }
        failed = !finite || (!moved && !done);
        memcpy(l, w->chol, sizeof(double) * p * p);
        i++;
    }
    *steps = i;
    return done && all_finite(p, theta);
}

/* ------------------------------------------------------------------ the online one-row update */
typedef struct {
    double sigma, f, curvature, decrement, low, high;
    int i, done, failed;
} root_t;

/* sigmoid(x^T theta(sigma)), theta(sigma) = m + sigma u: the row's mean at a point of the line */
static double mean_at(int p, const double *restrict x, const double *restrict m, const double *restrict u,
                      double sigma, double *restrict point) {
    p = DIM(p);
    for (int k = 0; k < p; k++) point[k] = m[k] + sigma * u[k];
    return sigmoid(dot(p, x, point));
}

/* rank_one_laplace's evaluate: F(sigma) = sigma - (y - mean), the curvature mean (1 - mean), the whole
 * problem's decrement F^2 v / (2 (1 + c v)), the bracket and the stopping flags */
static void evaluate(root_t *c, double sigma, double mean, double y, double v, double tol) {
    c->sigma = sigma;
    c->f = sigma - (y - mean);
    c->curvature = mean * (1.0 - mean);
    c->decrement = 0.5 * c->f * c->f * v / (1.0 + c->curvature * v);
    int finite = isfinite(c->f) && isfinite(c->curvature);
    if (c->f < 0) c->low = sigma;
    if (c->f > 0) c->high = sigma;
    c->done = finite && c->decrement <= tol;
    c->failed = !finite;
    c->i++;
}

/* rank_one_laplace for the logistic row (x, y) of weight 1 under N(m, (L L^T)^{-1}): the new mean and
 * factor in new_m, new_l; returns converged, *steps the evaluations of F. */
static int rank_one(int p, const double *restrict x, double y, const double *restrict m, const double *restrict l,
                    double tol, int max_steps, double *restrict new_m, double *restrict new_l, int *steps,
                    const work_t *w) {
    p = DIM(p);
    double *u = w->step, *point = w->trial;
    solve_lower(p, l, x, w->tmp);
    solve_lower_t(p, l, w->tmp, u); /* u = Lambda^{-1} x */
    double v = dot(p, x, u);
    double at_zero = mean_at(p, x, m, u, 0.0, point);
    double g0 = y - at_zero;
    root_t c = {0.0, 0.0, 0.0, 0.0, fmin(0.0, g0), fmax(0.0, g0), 0, 0, 0};
    evaluate(&c, 0.0, at_zero, y, v, tol);
    while (c.i < max_steps && !c.done && !c.failed) {
        double newton_point = c.sigma - c.f / (1.0 + c.curvature * v);
        double sigma = (newton_point > c.low && newton_point < c.high) ? newton_point : 0.5 * (c.low + c.high);
        evaluate(&c, sigma, mean_at(p, x, m, u, sigma, point), y, v, tol);
    }
    for (int k = 0; k < p; k++) new_m[k] = m[k] + c.sigma * u[k];
    /* chol(L L^T + c x x^T): its lower triangle formed, then factored */
    double *a = w->hess;
    for (int r = 0; r < p; r++)
        for (int col = 0; col <= r; col++) {
            double s = c.curvature * x[r] * x[col];
            for (int k = 0; k <= col; k++) s += l[r * p + k] * l[col * p + k];
            a[r * p + col] = s;
        }
    cholesky(p, a, new_l);
    *steps = c.i;
    return c.done && all_finite(p, new_m) && all_finite(p * p, new_l);
}

/* ------------------------------------------------------------------ one run */
static void exploration_order(int num_arms, int p, int num, const double *arms, double *residual, int *order) {
    memcpy(residual, arms, sizeof(double) * num_arms * p);
    for (int n = 0; n < num; n++) {
        int best = 0;
        double best_norm = -1.0;
        for (int k = 0; k < num_arms; k++) {
            double s = dot(p, residual + (size_t)k * p, residual + (size_t)k * p);
            if (s > best_norm) {
                best_norm = s;
                best = k;
            }
        }
        double norm = fmax(sqrt(best_norm), 2.2250738585072014e-308);
        double q[p];
        for (int i = 0; i < p; i++) q[i] = residual[(size_t)best * p + i] / norm;
        for (int k = 0; k < num_arms; k++) {
            double *r = residual + (size_t)k * p;
            double c = dot(p, r, q);
            for (int i = 0; i < p; i++) r[i] -= c * q[i];
        }
        order[n] = best;
    }
}

/*
 * Runs `runs` independent runs of `horizon` rounds, one after another.
 *   arms (runs, K, p), theta_star (runs, p): the instances;
 *   online: 0 for history="full", 1 for history="online";
 *   regret (runs, horizon): per-round expected regret; steps (runs, horizon): Newton steps of each update;
 *   not_converged (runs,): rounds whose sample was not finite or whose update did not converge.
 * Returns 0, -1 when memory could not be allocated, -2 when p differs from GLM_DIM (if compiled with one).
 */
int glm_tsl_runs(int runs, int horizon, int num_arms, int p, const double *arms, const double *theta_star,
                 double a, double prior_scale, double tol, int max_steps, int quadratic_stop, int online,
                 uint64_t seed, double *regret, int32_t *steps, int32_t *not_converged) {
#ifdef GLM_DIM
    if (p != GLM_DIM) return -2;
#endif
    size_t kp = (size_t)num_arms * p, pp = (size_t)p * p;
    double *buf = malloc(sizeof(double) * (2 * kp + 8 * (size_t)num_arms + 4 * pp + 8 * (size_t)p));
    int *ints = malloc(sizeof(int) * ((size_t)num_arms + (size_t)p));
    if (!buf || !ints) {
        free(buf);
        free(ints);
        return -1;
    }
    double *residual = buf, *rows = residual + kp, *mu = rows + kp, *counts = mu + num_arms, *sums = counts + num_arms,
           *score = sums + num_arms, *xa = score + num_arms, *xe = xa + num_arms, *xs = xe + num_arms,
           *xc = xs + num_arms, *l = xc + num_arms, *new_l = l + pp, *hess = new_l + pp, *chol = hess + pp,
           *theta = chol + pp, *new_theta = theta + p, *sample = new_theta + p, *xi = sample + p, *grad = xi + p,
           *step = grad + p, *tmp = step + p, *trial = tmp + p;
    int *slot = ints, *order = slot + num_arms; /* slot[k]: arm k's place among the pulled arms, or -1 */
    work_t w = {grad, hess, chol, step, tmp, trial};
    double inv_var = 1.0 / (prior_scale * prior_scale);
    int num_explore = p < num_arms ? p : num_arms;

    for (int run = 0; run < runs; run++) {
        const double *x = arms + (size_t)run * kp;
        rng_t rng;
        rng_seed(&rng, seed, (uint64_t)run);
        double best = -INFINITY;
        for (int k = 0; k < num_arms; k++) {
            mu[k] = sigmoid(dot(p, x + (size_t)k * p, theta_star + (size_t)run * p));
            best = fmax(best, mu[k]);
            slot[k] = -1;
        }
        exploration_order(num_arms, p, num_explore, x, residual, order);
        /* the fit of the prior alone: theta = 0, L = I / prior_scale */
        memset(l, 0, sizeof(double) * pp);
        for (int i = 0; i < p; i++) {
            theta[i] = 0.0;
            l[i * p + i] = 1.0 / prior_scale;
        }
        potential_t pot = {p, 0, rows, counts, sums, inv_var, xa, xe, xs, xc};
        int failures = 0;
        for (int t = 0; t < horizon; t++) {
            int action;
            int sample_ok = 1;
            if (t < num_explore) {
                action = order[t];
            } else {
                for (int i = 0; i < p; i++) xi[i] = normal(&rng);
                solve_lower_t(p, l, xi, sample);
                for (int i = 0; i < p; i++) sample[i] = theta[i] + a * sample[i];
                sample_ok = all_finite(p, sample);
                double top = -INFINITY;
                int ties = 0;
                action = 0;
                for (int k = 0; k < num_arms; k++) {
                    double s = dot(p, x + (size_t)k * p, sample);
                    score[k] = s;
                    if (s > top) {
                        top = s;
                        ties = 1;
                        action = k;
                    } else if (s == top) {
                        ties++;
                    }
                }
                uint64_t pick = next_u64(&rng); /* one random integer per round */
                if (ties > 1) {
                    uint64_t target = pick % (uint64_t)ties;
                    for (int k = 0, seen = 0; k < num_arms; k++)
                        if (score[k] == top && (uint64_t)seen++ == target) {
                            action = k;
                            break;
                        }
                }
            }
            double reward = uniform(&rng) < mu[action] ? 1.0 : 0.0;
            regret[(size_t)run * horizon + t] = best - mu[action];

            int converged, n_steps;
            const double *row = x + (size_t)action * p;
            if (online) {
                converged = rank_one(p, row, reward, theta, l, tol, max_steps, new_theta, new_l, &n_steps, &w);
            } else {
                if (slot[action] < 0) { /* a first pull: a new row */
                    int r = slot[action] = pot.num_active++;
                    memcpy(rows + (size_t)r * p, row, sizeof(double) * p);
                    counts[r] = 0.0;
                    sums[r] = 0.0;
                }
                counts[slot[action]] += 1.0;
                sums[slot[action]] += reward;
                memcpy(new_theta, theta, sizeof(double) * p);
                memcpy(new_l, l, sizeof(double) * pp);
                converged = newton(&pot, new_theta, new_l, tol, max_steps, quadratic_stop, &n_steps, &w);
            }
            int healthy = all_finite(p, new_theta) && all_finite((int)pp, new_l);
            if (healthy) {
                memcpy(theta, new_theta, sizeof(double) * p);
                memcpy(l, new_l, sizeof(double) * pp);
            }
            steps[(size_t)run * horizon + t] = n_steps;
            failures += !(sample_ok && converged && healthy);
        }
        not_converged[run] = failures;
    }
    free(buf);
    free(ints);
    return 0;
}
