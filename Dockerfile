# Tossup's image: the web server, the Celery worker and the bot supervisor with its bots
# (compose.yaml runs all three; README, "Deploying with docker compose"). The entrypoint waits for
# the database and migrates first.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DEBUG=0 SERVESTATIC_USE_FINDERS=0
WORKDIR /app
COPY requirements.txt ./
# The bot SDK (tossup_bot): runbot and the project's bots import its client. PyTorch's CPU index: PyPI's
# Linux torch wheel is a CUDA build of several GB.
COPY sdk ./sdk
RUN pip install --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt ./sdk
COPY . .
# Static files are served from STATIC_ROOT (servestatic, SERVESTATIC_USE_FINDERS=0). The key is a
# throw-away: collectstatic signs nothing, and no key may be baked into the image.
RUN SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && useradd --system --uid 10001 --home-dir /app tossup \
    && mkdir -p var/media var/cache && chown -R tossup var
USER tossup
EXPOSE 8000
ENTRYPOINT ["python", "/app/docker/entrypoint.py"]
CMD ["web"]
